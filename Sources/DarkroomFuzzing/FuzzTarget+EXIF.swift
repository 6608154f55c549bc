import DarkroomImage

extension FuzzTarget {
    /// EXIF: the input is a TIFF block. It is filtered for output (all tags with Orientation reset, and only
    /// Artist/Copyright), embedded in a JPEG as APP1 `Exif` and read back by the probe (orientation), the
    /// extractor and the decoder (which applies the orientation), and embedded in a PNG as `eXIf`.
    package static let exif = FuzzTarget(
        name: "exif", summary: "ExifMetadata prepare/extract/embed; the probe's orientation reader; decode upright"
    ) { bytes in
        let tiff = Array(bytes)
        let kept = ExifMetadata.prepared(tiff, keep: .all)
        _ = ExifMetadata.prepared(tiff, keep: .copyright)
        guard let jpeg = SmallImages.colorJPEG, let png = SmallImages.colorPNG else { return }
        let wrapped = SmallImages.jpeg(jpeg, inserting: 0xE1, payload: Array("Exif".utf8) + [0, 0] + tiff)
        _ = try? ImageProber.probe(wrapped, limits: FuzzLimits.decode)
        if let extracted = ExifMetadata.extract(from: wrapped) { _ = ExifMetadata.prepared(extracted, keep: .all) }
        _ = try? ImageDecoder().decode(
            wrapped, options: DecodeOptions(size: .maxPixelSize(8), limits: FuzzLimits.decode))
        if let kept {
            let out = ExifMetadata.embedding(kept, in: png, format: .png)
            _ = ExifMetadata.extract(from: out)
            _ = try? ImageProber.probe(ExifMetadata.embedding(kept, in: jpeg, format: .jpeg))
        }
    }
}
