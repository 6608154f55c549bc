import Foundation

/// Compact single-line JSON for the tools' `--json` outputs (sorted keys, so lines are stable and diffable).
package enum JSONLine {
    /// `object` as one line of JSON (`{}` if it cannot be serialised).
    package static func encode(_ object: [String: Any]) -> String {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// An `Encodable` value as a JSON object for ``encode(_:)``.
    package static func object(_ value: some Encodable) -> Any {
        guard let data = try? JSONEncoder().encode(value) else { return [:] as [String: Any] }
        return (try? JSONSerialization.jsonObject(with: data)) ?? [:] as [String: Any]
    }
}
