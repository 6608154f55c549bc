import DarkroomSupport

extension ImageProber {
    /// Walks JPEG markers from SOI to the first start-of-frame, noting EXIF orientation and an ICC profile
    /// on the way. Tolerates fill bytes (FF FF…), standalone markers (TEM, RSTn, a repeated SOI) and stray
    /// bytes between segments, as libjpeg does.
    static func probeJPEG(_ reader: ByteReader) throws(ProbeStop) -> ImageProbe {
        var position = 2  // after SOI (FF D8), checked by the format sniffing
        var orientation: ExifOrientation?
        var hasICCProfile = false

        while true {
            // Find the next 0xFF, skipping garbage, then skip fill bytes; `position` ends after the marker code.
            while try reader.u8(position) != 0xFF { position += 1 }
            position += 1
            var marker = try reader.u8(position)
            while marker == 0xFF {
                position += 1
                marker = try reader.u8(position)
            }
            position += 1

            switch marker {
            case 0x00, 0x01, 0xD0...0xD8:
                // A stuffed zero (garbage here), TEM, RSTn or SOI: no length, nothing to read.
                continue
            case 0xD9:
                throw .corrupt("JPEG ends (EOI) before a frame header")
            case 0xDA:
                throw .corrupt("JPEG scan (SOS) starts before a frame header")
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                return try frameHeader(
                    reader, at: position, marker: marker,
                    orientation: orientation ?? .up, hasICCProfile: hasICCProfile)
            default:
                let length = try reader.u16be(position)
                guard length >= 2 else {
                    throw .corrupt(
                        "JPEG segment FF\(Hex.encode(CollectionOfOne(UInt8(marker & 0xFF)), uppercase: true)) has length \(length) < 2"
                    )
                }
                if marker == 0xE1, orientation == nil, length >= 8 + 8,
                    try reader.u32be(position + 2) == 0x4578_6966,  // "Exif"
                    try reader.u16be(position + 6) == 0
                {
                    let tiff = try reader.slice(position + 8, length - 8)
                    orientation = ExifReader.orientation(tiff: tiff)
                } else if marker == 0xE2, !hasICCProfile, length >= 2 + 12,
                    try reader.u32be(position + 2) == 0x4943_435F,  // "ICC_"
                    try reader.u32be(position + 6) == 0x5052_4F46,  // "PROF"
                    try reader.u32be(position + 10) == 0x494C_4500
                {  // "ILE\0"
                    hasICCProfile = true
                }
                position += length
            }
        }
    }

    /// Reads a SOFn segment whose length field is at `position`.
    private static func frameHeader(
        _ reader: ByteReader, at position: Int, marker: Int,
        orientation: ExifOrientation, hasICCProfile: Bool
    )
        throws(ProbeStop) -> ImageProbe
    {
        let length = try reader.u16be(position)
        guard length >= 8 else { throw .corrupt("JPEG frame header has length \(length) < 8") }
        try reader.require(position, length)
        let precision = try reader.u8(position + 2)
        let height = try reader.u16be(position + 3)
        let width = try reader.u16be(position + 5)
        let components = try reader.u8(position + 7)
        guard components > 0, length == 8 + 3 * components else {
            throw .corrupt("JPEG frame header has \(components) components and length \(length)")
        }
        guard (1...16).contains(precision) else { throw .corrupt("JPEG sample precision \(precision)") }
        guard width > 0, height > 0 else {
            throw .unsupported("JPEG frame size \(width)×\(height): a size defined later (DNL) is not supported")
        }
        let isProgressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
        return ImageProbe(
            format: .jpeg, width: width, height: height, orientation: orientation,
            hasAlpha: false, isGrayscale: components == 1, frameCount: 1,
            isProgressive: isProgressive, hasICCProfile: hasICCProfile, bitDepth: precision,
            isCMYK: components == 4)
    }
}
