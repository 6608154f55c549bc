extension ImageProber {
    /// Reads the logical screen, then walks every block to the trailer, counting image descriptors (frames)
    /// and skipping their LZW data sub-blocks undecoded.
    ///
    /// - Parameter isComplete: whether `reader` holds the whole input. When it does and the data ends after
    ///   at least one complete frame, the frames so far are reported (browsers show them) instead of failing.
    static func probeGIF(_ reader: ByteReader, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        var width = try reader.u16le(6)
        var height = try reader.u16le(8)
        let screenFlags = try reader.u8(10)
        var position = 13
        if screenFlags & 0x80 != 0 { position += 3 << ((screenFlags & 7) + 1) }  // global color table

        var descriptors = 0
        var completeFrames = 0
        var hasAlpha = false
        var isInterlaced = false
        do throws(ProbeStop) {
            blocks: while true {
                switch try reader.u8(position) {
                case 0x3B:  // trailer
                    break blocks
                case 0x21:  // extension: label, then sub-blocks
                    let label = try reader.u8(position + 1)
                    position += 2
                    if label == 0xF9, try reader.u8(position) >= 1, try reader.u8(position + 1) & 1 != 0 {
                        hasAlpha = true  // graphic control extension with the transparency flag
                    }
                    position = try skipGIFSubBlocks(reader, from: position)
                case 0x2C:  // image descriptor
                    try reader.require(position, 10)
                    descriptors += 1
                    if descriptors > limits.maxFrames { throw .tooManyFrames(descriptors, limits) }
                    let flags = try reader.u8(position + 9)
                    if descriptors == 1 {
                        isInterlaced = flags & 0x40 != 0
                        if width == 0 || height == 0 {  // some encoders leave the screen size 0: use the frame's
                            width = try reader.u16le(position + 1) + reader.u16le(position + 5)
                            height = try reader.u16le(position + 3) + reader.u16le(position + 7)
                        }
                    }
                    position += 10
                    if flags & 0x80 != 0 { position += 3 << ((flags & 7) + 1) }  // local color table
                    position += 1  // LZW minimum code size
                    position = try skipGIFSubBlocks(reader, from: position)
                    completeFrames += 1
                default:
                    throw .corrupt("GIF has an unknown block type at offset \(position)")
                }
            }
        } catch {
            guard case .needMoreData = error, isComplete, completeFrames > 0 else { throw error }
            // The data ends before the trailer but after whole frames: report what a browser would show.
        }

        guard completeFrames > 0 else { throw .corrupt("GIF has no frames") }
        guard width > 0, height > 0 else { throw .corrupt("GIF size \(width)×\(height)") }
        return ImageProbe(
            format: .gif, width: width, height: height, hasAlpha: hasAlpha,
            frameCount: completeFrames, isProgressive: isInterlaced)
    }

    /// Skips data sub-blocks (a size byte, then that many bytes) up to and including the zero terminator;
    /// returns the position after it. Every step advances at least one byte.
    @inline(__always)
    static func skipGIFSubBlocks(_ reader: ByteReader, from start: Int) throws(ProbeStop) -> Int {
        var position = start
        while true {
            let size = try reader.u8(position)
            position += 1
            if size == 0 { return position }
            position += size
        }
    }
}
