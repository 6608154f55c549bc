import DarkroomImage

extension FuzzTarget {
    /// The header reader: every format's probe, the animation probe, and the colour summary.
    package static let probe = FuzzTarget(
        name: "probe",
        summary:
            "ImageProber.probe, the animation, colour and gain-map probes, Apple's maker note, a Motion Photo's clip"
    ) { bytes in
        _ = try? ImageProber.probe(bytes, limits: FuzzLimits.decode)
        _ = ImageProber.colorProfile(of: bytes, limits: FuzzLimits.decode)
        _ = ImageProber.gainMap(of: bytes, limits: FuzzLimits.decode)
        _ = AppleHDRHeadroom(exif: bytes)  // the EXIF walk an iPhone HEIC's headroom takes
        _ = AppleMakerNote.contentIdentifier(exif: bytes)  // a Live Photo still's identifier in the maker note
        _ = ImageProber.contentIdentifier(in: bytes)  // the same, found in a JPEG's segments or a HEIC's EXIF item
        _ = ImageProber.embeddedVideo(in: bytes)  // a Motion Photo's XMP, Samsung trailer or mpvd box
        _ = try? ImageProber.probe(bytes, limits: DecodeLimits(maxFrames: 3, maxAnimationPixels: 1 << 16))
    }

    /// Still decoding at several sizes, pixel formats, colour handling and crops. Which extra variant runs depends
    /// on the input's length, so the corpus covers all of them without decoding every input five times.
    package static let decode = FuzzTarget(
        name: "decode",
        summary: "ImageDecoder.decode at several sizes, pixel formats, crops, colour spaces; JPEGs also as a stream"
    ) { bytes in
        let decoder = ImageDecoder()
        var options = DecodeOptions(size: .maxPixelSize(64), limits: FuzzLimits.decode)
        _ = try? decoder.decode(bytes, options: options)
        switch bytes.count % 6 {
        case 0:
            options.geometry.size = .cover(width: 33, height: 17)
            options.geometry.pixelFormat = .exactly(.gray8)
        case 1:
            options.geometry.size = .original
            options.colorSpace = .original
        case 2:
            options.geometry.size = .fit(width: 48, height: 48)
            options.geometry.crop = CropRegion(width: .fraction(0.5), height: .pixels(40))
            options.geometry.pixelFormat = .exactly(.rgb565)
        case 3:
            options.geometry.size = .maxPixelSize(1)
            options.geometry.appliesOrientation = false
            options.acceptTruncated = true
        case 4:
            options.geometry.size = .fill(width: 24, height: 40)
            options.chromaFromDC = false
            options.geometry.pixelFormat = .exactly(.rgba8)
        default:
            options.geometry.size = .auto(width: 30, height: 30)
            options.geometry.minimumSize = MinimumSize(width: 20)
            options.geometry.allowsUpscaling = true
        }
        _ = try? decoder.decode(bytes, options: options)
        // A JPEG also arrives in three pieces through the progressive stream, asking for an image after each.
        guard bytes.count > 2, bytes[0] == 0xFF, bytes[1] == 0xD8,
            let stream = ProgressiveJPEGStream(limits: FuzzLimits.decode, previewShare: .infinity)
        else { return }
        var streamed = DecodeOptions(size: .maxPixelSize(48), limits: FuzzLimits.decode)
        streamed.shrinkOnLoadMargin = 4  // keeps the DCT scale above 1/8, which the stream refuses
        for end in [bytes.count / 3, bytes.count * 2 / 3, bytes.count] {
            _ = try? stream.image(
                UnsafeRawBufferPointer(rebasing: bytes[..<end]), isComplete: end == bytes.count, options: streamed)
        }
    }

    /// Animated decoding: frames pulled until the end (at most 64), with a skip and a rewind on the way, at a
    /// small output size.
    package static let animation = FuzzTarget(
        name: "animation", summary: "AnimatedImageDecoder: every frame (≤ 64), a skip, a rewind"
    ) { bytes in
        guard let source = try? EncodedAnimation(copying: bytes, limits: FuzzLimits.decode) else { return }
        let options = DecodeOptions(size: .maxPixelSize(32), limits: FuzzLimits.decode)
        guard let decoder = try? AnimatedImageDecoder(source, options: options, frameLimit: 64) else { return }
        var pulled = 0
        while pulled < 64, let frame = try? decoder.nextFrame() {
            _ = frame.bitmap.width
            pulled += 1
            if pulled == 2 { _ = try? decoder.skipFrame() }
        }
        if pulled > 0 {
            try? decoder.rewind()
            _ = try? decoder.nextFrame()
        }
    }
}
