import Foundation

/// Finds property values in an XMP packet by their qualified name: the flat properties that gain maps and Motion
/// Photos use, and the `Container:Directory` that lists the files appended to a photo.
///
/// A scan for names and values, not an XML parser: the properties read are flat attributes or simple elements, and
/// a packet is bounded by its segment or box (a JPEG's at 64 KiB), so each lookup costs a pass over at most that.
struct XMPScanner {
    let text: Substring

    /// The namespace of Google's `Container:Directory`.
    static let containerNamespace = "http://ns.google.com/photos/1.0/container/"
    /// The namespace of a directory entry's `Item:` properties.
    static let itemNamespace = "http://ns.google.com/photos/1.0/container/item/"

    /// One entry of a `Container:Directory`: a file in the container, in the order they are stored.
    struct ContainerItem: Equatable {
        /// `Primary`, `GainMap`, `MotionPhoto`, `Depth`, …
        var semantic: String
        /// The entry's MIME type, when it names one.
        var mime: String?
        /// The entry's length in bytes (0 or absent for the primary image, whose length is implied).
        var length: Int?
        /// Bytes between this entry's data and the next entry's (or, for the last entry, the end of the file).
        var padding: Int
    }

    /// The value of `name` as an attribute (`name="v"`) or a simple element (`<name>v</name>`).
    func value(_ name: String) -> String? {
        if let attribute = attributeValue(name) { return attribute }
        guard let open = text.range(of: "<" + name + ">"),
            let close = text[open.upperBound...].range(of: "</" + name + ">")
        else { return nil }
        return text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The value of `name` as an attribute: preceded by white space, then `=` and a quoted value.
    func attributeValue(_ name: String) -> String? {
        var rest = text[...]
        while let range = rest.range(of: name) {
            let before = range.lowerBound > text.startIndex ? text[text.index(before: range.lowerBound)] : " "
            rest = rest[range.upperBound...]
            if before.isWhitespace, let value = Self.quotedValue(after: rest) { return String(value) }
        }
        return nil
    }

    /// The entries of the packet's `Container:Directory`, in order; empty when it has none. Prefixes are those the
    /// packet binds to Google's namespaces (`Container` and `Item` when it binds none).
    func containerItems() -> [ContainerItem] {
        let container = Self.prefix(boundTo: Self.containerNamespace, in: text) ?? "Container"
        let item = Self.prefix(boundTo: Self.itemNamespace, in: text) ?? "Item"
        guard let open = text.range(of: "<\(container):Directory"),
            let close = text[open.upperBound...].range(of: "</\(container):Directory>")
        else { return [] }
        return Self.listItems(text[open.upperBound..<close.lowerBound]).compactMap { body in
            let entry = XMPScanner(text: body[...])
            guard let semantic = entry.value("\(item):Semantic") else { return nil }
            return ContainerItem(
                semantic: semantic, mime: entry.value("\(item):Mime"),
                length: entry.value("\(item):Length").flatMap { Int($0) },
                padding: entry.value("\(item):Padding").flatMap { Int($0) }.map { max(0, $0) } ?? 0)
        }
    }

    /// The bodies of the `rdf:li` elements in `body`.
    static func listItems(_ body: Substring) -> [String] {
        var items: [String] = []
        var rest = body
        while let open = rest.range(of: "<rdf:li"), let close = rest[open.upperBound...].range(of: "</rdf:li>") {
            let element = rest[open.upperBound..<close.lowerBound]
            if let tagEnd = element.firstIndex(of: ">") {
                items.append(String(element[element.index(after: tagEnd)...]))
            }
            rest = rest[close.upperBound...]
        }
        return items
    }

    /// The prefix an `xmlns:prefix="uri"` declaration binds to `uri`.
    static func prefix(boundTo uri: String, in text: Substring) -> String? {
        var rest = text[...]
        while let range = rest.range(of: "xmlns:") {
            rest = rest[range.upperBound...]
            let name = rest.prefix { !$0.isWhitespace && $0 != "=" }
            if quotedValue(after: rest[name.endIndex...]) == uri[...] { return String(name) }
        }
        return nil
    }

    /// The value of an attribute whose name ends where `text` starts: optional white space, `=`, optional white
    /// space, then a value in double or single quotes; nil when `text` does not continue so.
    static func quotedValue(after text: Substring) -> Substring? {
        let afterName = text.drop { $0.isWhitespace }
        guard afterName.first == "=" else { return nil }
        let value = afterName.dropFirst().drop { $0.isWhitespace }
        guard let quote = value.first, quote == "\"" || quote == "'" else { return nil }
        let body = value.dropFirst()
        return body.firstIndex(of: quote).map { body[..<$0] }
    }
}
