import DarkroomImage
import DarkroomTables
import Logging

/// DarkroomTables' image tables as the pipeline's ``ImageTableCaching``: one `ImageTable` per format name.
///
/// A request whose ``ImageRequest/tableFormat`` names one of these tables is answered from it after the memory
/// cache (a zero-copy bitmap into the table's mapping), and a decoded image for it is copied into a slot of the
/// table (converted to the table's pixel format when it differs). Images larger than the table's format are not
/// stored. Both calls may touch the disk and run on the pipeline's I/O threads.
public final class ImageTableSet: ImageTableCaching {
    private let tables: [String: ImageTable]
    private let logger = Logger(label: "darkroom.pipeline")

    /// Wraps open tables, each under its format's ``ImageFormat/name`` (later ones win on a duplicate name).
    public init(_ tables: [ImageTable]) {
        self.tables = Dictionary(tables.map { ($0.format.name, $0) }, uniquingKeysWith: { _, b in b })
    }

    /// The table for `format`, if this set has one.
    public func table(named format: String) -> ImageTable? { tables[format] }

    /// `ImageTable.entry(for:)`: a pinned, zero-copy bitmap, or `nil` (also when the table cannot map it).
    public func image(forEntity entity: String, format: String) -> Bitmap? {
        guard let table = tables[format] else { return nil }
        do {
            return try table.entry(for: entity)
        } catch {
            logger.warning("image table read failed", metadata: ["table": "\(format)", "error": "\(error)"])
            return nil
        }
    }

    /// `ImageTable.set(entity:source:draw:)`, copying `bitmap`'s rows into the slot. Cost: one pass over the
    /// pixels (plus a conversion when the pixel formats differ) and the table's commit.
    public func store(_ bitmap: Bitmap, forEntity entity: String, format: String) {
        guard let table = tables[format], !table.isReadOnly else { return }
        let target = table.format
        guard bitmap.width <= target.width, bitmap.height <= target.height else { return }
        do {
            let source = bitmap.format == target.pixelFormat ? bitmap : try bitmap.converted(to: target.pixelFormat)
            try table.set(entity: entity, source: "") { writer in
                let canvas = try writer.canvas(width: source.width, height: source.height, isOpaque: source.isOpaque)
                let rowBytes = source.width * source.format.bytesPerPixel
                for y in 0..<source.height { canvas.row(y).copyMemory(from: source.row(y), byteCount: rowBytes) }
                return canvas
            }
        } catch {
            logger.warning("image table write failed", metadata: ["table": "\(format)", "error": "\(error)"])
        }
    }
}
