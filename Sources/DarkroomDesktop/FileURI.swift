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

    /// `path` without empty, `.` and `..` components (as `g_canonicalize_filename`).
    static func canonicalize(_ path: String) -> String {
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
