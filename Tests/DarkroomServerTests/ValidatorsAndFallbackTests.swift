import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// `Last-Modified` / `If-Modified-Since` beside the `ETag`, and the fallback image for failed `<img>` requests.
@Suite("Validators and fallback image")
struct ValidatorsAndFallbackTests {
    let root = ServerHarness.makeRoot()

    @Test func lastModifiedIsTheFilesTimeAndIfModifiedSinceRevalidates() async throws {
        // Given photo.jpg modified at a known time
        let modified = 1_700_000_000
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: Double(modified))], ofItemAtPath: root + "/photo.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let uri = "/v1/thumb?src=photo.jpg&w=64"
            // When it is fetched
            let first = try await client.execute(uri: uri, method: .get)
            // Then Last-Modified is that time as an HTTP date
            #expect(first.headers[.lastModified] == "Tue, 14 Nov 2023 22:13:20 GMT")
            #expect(HTTPDate.parse(HTTPDate.format(modified)) == modified)
            // And If-Modified-Since at or after it is 304, before it 200
            let same = try await client.execute(
                uri: uri, method: .get, headers: [.ifModifiedSince: "Tue, 14 Nov 2023 22:13:20 GMT"])
            let earlier = try await client.execute(
                uri: uri, method: .get, headers: [.ifModifiedSince: "Tue, 14 Nov 2023 22:13:19 GMT"])
            #expect(same.status == .notModified && same.headers[.eTag] == first.headers[.eTag])
            #expect(earlier.status == .ok)
            // And an If-None-Match that does not match wins over a later If-Modified-Since
            let both = try await client.execute(
                uri: uri, method: .get,
                headers: [.ifNoneMatch: "\"other\"", .ifModifiedSince: "Wed, 15 Nov 2023 00:00:00 GMT"])
            #expect(both.status == .ok)
            // And a date that is not an HTTP date is ignored
            let junk = try await client.execute(uri: uri, method: .get, headers: [.ifModifiedSince: "yesterday"])
            #expect(junk.status == .ok)
        }
    }

    @Test func failedImageRequestsGetTheFallbackImageWithTheErrorStatus() async throws {
        // Given a server with a fallback PNG
        let fallback = try ImageEncoder.encode(TestBitmaps.gradient(8, 8, alpha: false), as: .png)
        var configuration = ServerHarness.configuration(root: root)
        configuration.fallbackImage = fallback
        configuration.thumbor.key = "k"
        try await ServerHarness.withServer(configuration) { _, client in
            // When a browser asks for a missing image, and for a badly signed thumbor URL
            let missing = try await client.execute(
                uri: "/v1/thumb?src=nope.jpg&w=64", method: .get, headers: [.accept: "image/avif,image/webp,*/*"])
            let unsigned = try await client.execute(
                uri: "/thumbor/unsafe/64x64/photo.jpg", method: .get, headers: [.accept: "image/webp,*/*"])
            // Then each gets the fallback image with its error status and code
            #expect(missing.status == .notFound && missing.bytes == fallback)
            #expect(
                missing.headers[.contentType] == "image/png"
                    && missing.headers[ValidatorsAndFallbackTests.error] == "not_found")
            #expect(unsigned.status == .forbidden && unsigned.bytes == fallback)
            // And an API client (JSON, or no Accept) still gets the JSON error
            let api = try await client.execute(
                uri: "/v1/thumb?src=nope.jpg&w=64", method: .get, headers: [.accept: "application/json"])
            #expect(api.status == .notFound && api.errorCode == "not_found")
            let bare = try await client.execute(uri: "/v1/thumb?src=nope.jpg&w=64", method: .get)
            #expect(bare.errorCode == "not_found")
            // And other routes never answer with it
            let info = try await client.execute(
                uri: "/v1/info?src=nope.jpg", method: .get, headers: [.accept: "image/*"])
            #expect(info.errorCode == "not_found")
        }
    }

    static let error = HTTPField.Name("X-Darkroom-Error")!
}
