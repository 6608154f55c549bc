import Foundation
import Testing

@testable import DarkroomServer

@Suite("RequestSigner")
struct RequestSignerTests {
    static let signer = RequestSigner(key: "darkroom-test-key")
    static let query: [(name: String, value: String)] = [("src", "photos/cat one.jpg"), ("w", "320"), ("fmt", "webp")]
    /// `hmac.new(b"darkroom-test-key", b"/thumb?fmt=webp&src=photos%2Fcat%20one.jpg&w=320", sha256).hexdigest()`
    static let expected = "e908c6d4cb868dede5ce46e5617535f6d8dcb2ac78c6afc5fdea4bb32b3ea435"

    @Test("fixed vector computed with Python's hmac module")
    func vector() {
        // Given a path and decoded query, When signing, Then canonical form and hex match Python's
        #expect(
            RequestSigner.canonical(path: "/thumb", query: Self.query)
                == "/thumb?fmt=webp&src=photos%2Fcat%20one.jpg&w=320")
        #expect(Self.signer.signature(path: "/thumb", query: Self.query) == Self.expected)
        // hmac.new(b"darkroom-test-key", b"/thumb", sha256): no items other than sig means no "?"
        #expect(
            Self.signer.signature(path: "/thumb", query: [("sig", "x")])
                == "37e7530bc5fe4caffbc5a8a8f854a94a31ba12899f16a372c80ef523cbbebe49")
    }

    @Test("canonical form: unreserved characters kept, everything else encoded, sorted by name then value")
    func canonical() {
        #expect(
            RequestSigner.canonical(path: "/p", query: [("b", "2"), ("a", "z"), ("a", "y"), ("sig", "q")])
                == "/p?a=y&a=z&b=2")
        #expect(
            RequestSigner.canonical(path: "/p", query: [("k", "A-z_0.9~ +&=/?é")])
                == "/p?k=A-z_0.9~%20%2B%26%3D%2F%3F%C3%A9")
        #expect(RequestSigner.canonical(path: "/p", query: []) == "/p")
    }

    @Test("verification accepts any parameter order and either hex case")
    func orderDoesNotMatter() {
        // Given a signed query, When its items are shuffled, Then it still verifies
        let sig = Self.signer.signature(path: "/thumb", query: Self.query)
        let shuffled: [(name: String, value: String)] = [
            ("w", "320"), ("sig", sig), ("fmt", "webp"), ("src", "photos/cat one.jpg"),
        ]
        #expect(code { try Self.signer.verify(path: "/thumb", query: shuffled) } == nil)
        #expect(code { try Self.signer.verify(path: "/thumb", query: Self.query + [("sig", sig.uppercased())]) } == nil)
    }

    @Test("tampering with any value, name, the path or the key fails; missing or doubled sig fails")
    func tampering() {
        let sig = Self.signer.signature(path: "/thumb", query: Self.query)
        let signed = Self.query + [("sig", sig)]
        for index in Self.query.indices {
            var changed = signed
            changed[index].value += "x"
            #expect(code { try Self.signer.verify(path: "/thumb", query: changed) } == .badSignature)
            changed = signed
            changed[index].name = "x" + changed[index].name
            #expect(code { try Self.signer.verify(path: "/thumb", query: changed) } == .badSignature)
        }
        #expect(code { try Self.signer.verify(path: "/thumb/", query: signed) } == .badSignature)
        #expect(code { try Self.signer.verify(path: "/thumb", query: signed + [("extra", "1")]) } == .badSignature)
        #expect(code { try RequestSigner(key: "other").verify(path: "/thumb", query: signed) } == .badSignature)
        #expect(code { try Self.signer.verify(path: "/thumb", query: Self.query) } == .badSignature)
        #expect(code { try Self.signer.verify(path: "/thumb", query: Self.query + [("sig", "")]) } == .badSignature)
        #expect(code { try Self.signer.verify(path: "/thumb", query: Self.query + [("sig", "zz")]) } == .badSignature)
        #expect(code { try Self.signer.verify(path: "/thumb", query: signed + [("sig", sig)]) } == .badSignature)
        #expect(code { try Self.signer.verify(path: "/thumb", query: Array(signed.dropFirst())) } == .badSignature)
    }

    @Test("signedQuery builds a query string that verifies once decoded")
    func signedQuery() {
        // Given a signed query string
        let text = Self.signer.signedQuery(path: "/thumb", query: Self.query)
        #expect(text == "fmt=webp&src=photos%2Fcat%20one.jpg&w=320&sig=" + Self.expected)
        // When a server decodes it back into items, Then they verify
        let items = text.split(separator: "&").map { part -> (name: String, value: String) in
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding! }
            return (pair[0], pair[1])
        }
        #expect(code { try Self.signer.verify(path: "/thumb", query: items) } == nil)
        #expect(Self.signer.signedQuery(path: "/x", query: []) == "sig=" + Self.signer.signature(path: "/x", query: []))
    }
}
