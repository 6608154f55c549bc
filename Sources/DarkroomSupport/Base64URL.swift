import Foundation

/// URL-safe base64 (RFC 4648 §5: `-` and `_` for `+` and `/`), as signed URLs and imgproxy sources use it.
package enum Base64URL {
    /// Encodes `bytes`; `padded` keeps the trailing `=` (thumbor's signatures have it, imgproxy's do not).
    package static func encode(_ bytes: some Sequence<UInt8>, padded: Bool = false) -> String {
        var text = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        if !padded { while text.hasSuffix("=") { text.removeLast() } }
        return text
    }

    /// Decodes URL-safe base64 with or without padding; `nil` when `text` is not base64.
    package static func decode(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if !standard.contains("=") {
            guard standard.utf8.count % 4 != 1 else { return nil }
            standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
