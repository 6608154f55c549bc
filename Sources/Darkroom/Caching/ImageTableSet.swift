import DarkroomImage
import DarkroomTables
import Logging

/// DarkroomTables' image tables as the pipeline's ``ImageTableCaching``: one `ImageTable` per output geometry.
///
/// A request whose ``ImageRequest/geometry`` is one of these tables' is answered from it after the memory cache (a
/// zero-copy bitmap into the table's mapping), and a decoded image for it is copied into a slot of the table
/// (converted to the table's pixel format when it differs). Both calls may touch the disk and run on the pipeline's
/// I/O threads.
public final class ImageTableSet: ImageTableCaching {
    private let tables: [OutputGeometry: ImageTable]
    private let logger = Logger(label: "darkroom.pipeline")

    /// Serves each geometry from its table; make the table's format from the same geometry
    /// (`ImageTableFormat(name:geometry:maximumCount:)`).
    /// - Throws: `.invalidArgument` when a table's format cannot hold what its geometry decodes to (a smaller entry,
    ///   another pixel format), so a mismatch is found at set-up rather than as entries never stored.
    public init(_ tables: [OutputGeometry: ImageTable]) throws(ImageTableError) {
        for (geometry, table) in tables where !table.format.holds(geometry) {
            let format = table.format
            throw ImageTableError(
                .invalidArgument,
                "table '\(format.name)' (\(format.width)×\(format.height) \(format.pixelFormat.rawValue)) cannot hold \(geometry.key)"
            )
        }
        self.tables = tables
    }

    /// The table for `geometry`, if this set has one.
    public func table(for geometry: OutputGeometry) -> ImageTable? { tables[geometry] }

    /// Whether this set has a table for `geometry`. Cost: one hash lookup.
    public func holds(_ geometry: OutputGeometry) -> Bool { tables[geometry] != nil }

    /// `ImageTable.entry(for:)`: a pinned, zero-copy bitmap, or `nil` (also when the table cannot map it).
    public func image(forEntity entity: String, geometry: OutputGeometry) -> Bitmap? {
        guard let table = tables[geometry] else { return nil }
        do {
            return try table.entry(for: entity)
        } catch {
            logger.warning("image table read failed", metadata: ["table": "\(table.format.name)", "error": "\(error)"])
            return nil
        }
    }

    /// `ImageTable.set(entity:source:draw:)`, copying `bitmap`'s rows into the slot. Cost: one pass over the
    /// pixels (plus a conversion when the pixel formats differ) and the table's commit.
    public func store(_ bitmap: Bitmap, forEntity entity: String, geometry: OutputGeometry) {
        guard let table = tables[geometry], !table.isReadOnly else { return }
        let target = table.format
        guard bitmap.width <= target.width, bitmap.height <= target.height else {
            // A processor enlarged the image past the geometry's box
            logger.notice(
                "image larger than its table's entries not stored",
                metadata: ["table": "\(target.name)", "size": "\(bitmap.width)×\(bitmap.height)"])
            return
        }
        do {
            let source = bitmap.format == target.pixelFormat ? bitmap : try bitmap.converted(to: target.pixelFormat)
            try table.set(entity: entity, source: "") { writer in
                let canvas = try writer.canvas(width: source.width, height: source.height, isOpaque: source.isOpaque)
                let rowBytes = source.width * source.format.bytesPerPixel
                for y in 0..<source.height { canvas.row(y).copyMemory(from: source.row(y), byteCount: rowBytes) }
                return canvas
            }
        } catch {
            logger.warning("image table write failed", metadata: ["table": "\(target.name)", "error": "\(error)"])
        }
    }
}
