import DarkroomImage

extension ThumbHash {
    /// The ThumbHash of a rendered thumbnail: reduced to at most ``ThumbHash/maxSide`` pixels a side (an area
    /// average) and encoded; `nil` when either step fails (a failure only means no placeholder). Blocking: call on a
    /// pipeline processing thread. Cost: one pass over the thumbnail's pixels and the encode of ≤ 100 × 100 pixels.
    package static func placeholder(ofThumbnail bitmap: Bitmap) -> [UInt8]? {
        let side = maxSide
        var small = bitmap
        if bitmap.width > side || bitmap.height > side {
            let scale = Double(side) / Double(max(bitmap.width, bitmap.height))
            let resize = ImageProcessors.Resize(
                width: max(1, Int(Double(bitmap.width) * scale)), height: max(1, Int(Double(bitmap.height) * scale)))
            guard let resized = try? resize.process(bitmap) else { return nil }
            small = resized
        }
        return try? encode(small)
    }
}
