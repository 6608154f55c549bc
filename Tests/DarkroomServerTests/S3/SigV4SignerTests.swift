import Crypto
import DarkroomSupport
import Foundation
import Testing

@testable import DarkroomServer

/// The SigV4 signer against the examples in AWS's S3 documentation ("Signature Calculations for the Authorization
/// Header: Transferring Payload in a Single Chunk"), whose credentials, time and signatures are published.
@Suite("AWS Signature V4")
struct SigV4SignerTests {
    let signer = SigV4Signer(
        credentials: .init(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    /// 2013-05-24T00:00:00Z.
    let date = Date(timeIntervalSince1970: 1_369_353_600)

    func authorization(_ url: String, _ headers: [(name: String, value: String)] = []) throws -> String {
        let signed = signer.sign(url: try #require(URL(string: url)), headers: headers, date: date)
        return try #require(signed.first { $0.name == "authorization" }?.value)
    }

    @Test func getObjectWithRangeMatchesThePublishedSignature() throws {
        // Given AWS's "GET Object" example: the first 10 bytes of test.txt in examplebucket
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt"))
        // Then its canonical request hashes to the published value
        let canonical = signer.canonicalRequest(
            method: "GET", url: url,
            headers: [
                ("host", "examplebucket.s3.amazonaws.com"), ("range", "bytes=0-9"),
                ("x-amz-content-sha256", SigV4Signer.emptyPayloadHash), ("x-amz-date", "20130524T000000Z"),
            ], payloadHash: SigV4Signer.emptyPayloadHash)
        #expect(
            Hex.encode(SHA256.hash(data: Array(canonical.utf8)))
                == "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
        // And the Authorization header is the published one
        #expect(
            try authorization(url.absoluteString, [("Range", "bytes=0-9")])
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func queriesAreCanonicalisedAsPublished() throws {
        // Given AWS's "GET Bucket Lifecycle" and "Get Bucket (List Objects)" examples
        let lifecycle = try authorization("https://examplebucket.s3.amazonaws.com/?lifecycle")
        let list = try authorization("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J")
        // Then their signatures are the published ones
        #expect(lifecycle.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))
        #expect(list.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
    }

    @Test func keysAreEncodedOnceAndTokensSigned() throws {
        // Given a key with spaces and a session token
        var withToken = signer
        withToken = SigV4Signer(
            credentials: .init(accessKeyID: "A", secretAccessKey: "S", sessionToken: "TOKEN"), region: "eu-west-1")
        let url = try #require(URL(string: "http://127.0.0.1:9000/bucket/a%20b/c+d.jpg"))
        let headers = withToken.sign(url: url, date: date)
        // Then the path is encoded once (a space as %20, + as %2B) and the token is a signed header
        let canonical = withToken.canonicalRequest(
            method: "GET", url: url, headers: [("host", "127.0.0.1:9000")], payloadHash: SigV4Signer.emptyPayloadHash)
        #expect(canonical.hasPrefix("GET\n/bucket/a%20b/c%2Bd.jpg\n\n"))
        let auth = try #require(headers.first { $0.name == "authorization" }?.value)
        #expect(auth.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        #expect(headers.contains { $0.name == "x-amz-security-token" && $0.value == "TOKEN" })
    }
}
