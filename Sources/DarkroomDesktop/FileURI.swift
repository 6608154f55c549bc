import DarkroomSupport

/// `file://` URIs as GLib writes them (`g_filename_to_uri`), the key of the freedesktop thumbnail cache: every
/// byte of the absolute path escaped as `%XX` (upper-case hex) except ASCII letters, digits and
/// `! $ & ' ( ) * + , - . / : = @ _ ~`. Two programs that escape differently would never find each other's
/// thumbnails, so this follows GLib's table exactly.
public enum FileURI {
    /// The URI of an absolute path, canonical as GIO makes it (`//`, `.` and `..` removed, symbolic links kept).
    /// A relative path is taken as it is: callers make paths absolute first.
    public static func of(path: String) -> String {
        var uri = "file://"
        let canonical = canonicalize(path)
        uri.reserveCapacity(canonical.utf8.count + 8)
        for byte in canonical.utf8 {
            if isKept(byte) {
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                uri += "%" + Hex.encode(CollectionOfOne(byte), uppercase: true)
            }
        }
        return uri
    }

    /// The absolute path a `file://` URI names (`file:///…` or `file://localhost/…`), its `%XX` escapes decoded;
    /// nil for another scheme, another host, a relative or empty path, a malformed escape, or a path holding a NUL
    /// or bytes that are not UTF-8. Cost: one pass over the URI.
    public static func path(of uri: String) -> String? {
        var rest: Substring
        if uri.hasPrefix("file:///") {
            rest = uri.dropFirst(7)
        } else if uri.hasPrefix("file://localhost/") {
            rest = uri.dropFirst(16)
        } else {
            return nil
        }
        if let query = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<query] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rest.utf8.count)
        var utf8 = rest.utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = utf8.next().flatMap(Hex.value(ofDigit:)),
                    let low = utf8.next().flatMap(Hex.value(ofDigit:))
                else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        guard !bytes.contains(0), bytes.first == UInt8(ascii: "/") else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `path` without empty, `.` and `..` components (as `g_canonicalize_filename`).
    package static func canonicalize(_ path: String) -> String {
        guard path.hasPrefix("/") else { return path }
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!$&'()*+,-./:=@_~".utf8).contains(byte)
        }
    }
}
