import DarkroomTestSupport
import Testing

@testable import DarkroomImage

/// The APNG conformance cases (Philip Taylor's suite, carried on by web-platform-tests as `png/apng`; Pillow ships
/// the files as `Tests/images/apng/`), built here chunk by chunk from the suite's own descriptions. Each case states
/// what a browser shows, as the suite expects it. For every invalid file the suite asks for "the default image
/// (solid green) or an error", quoting the specification: "when any error is encountered decoders should discard all
/// subsequent frames, stop the animation, and revert to displaying the default image". Darkroom shows the default
/// image where the file has a sound one: as a still, and as a one-frame animation when an animation is asked for.
@Suite struct APNGConformanceTests {
    static let width = 16
    static let height = 8
    static let green: [UInt8] = [0, 255, 0, 255]
    static let red: [UInt8] = [255, 0, 0, 255]

    typealias Chunk = (type: String, payload: [UInt8])

    static func be32(_ value: Int) -> [UInt8] { AnimationFiles.bigEndian32(value) }
    static func ihdr() -> Chunk { ("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0]) }
    static func actl(_ frames: Int, plays: Int = 0) -> Chunk { ("acTL", be32(frames) + be32(plays)) }
    static func fctl(_ sequence: Int, width: Int = width, height: Int = height) -> Chunk {
        ("fcTL", be32(sequence) + be32(width) + be32(height) + be32(0) + be32(0) + [0, 100, 0, 100, 0, 0])
    }
    static func data(_ rgba: [UInt8], height: Int = height) -> [UInt8] {
        AnimationFiles.solidImageData(width: width, height: height, rgba: rgba)
    }
    static func idat(_ rgba: [UInt8], height: Int = height) -> Chunk { ("IDAT", data(rgba, height: height)) }
    static func fdat(_ sequence: Int, _ rgba: [UInt8], height: Int = height) -> Chunk {
        ("fdAT", be32(sequence) + data(rgba, height: height))
    }
    /// One frame's data cut in two `fdAT`s: the first `cut` bytes under `first`, the rest under `second`, placed
    /// in the order given.
    static func splitFdat(_ first: Int, _ second: Int, _ rgba: [UInt8], cut: Int = 32, reversed: Bool = false)
        -> [Chunk]
    {
        let bytes = data(rgba)
        let head: Chunk = ("fdAT", be32(first) + bytes[..<cut])
        let tail: Chunk = ("fdAT", be32(second) + bytes[cut...])
        return reversed ? [tail, head] : [head, tail]
    }
    static let iend: Chunk = ("IEND", [])

    /// What a case must give: the default image as a still (and as a one-frame animation), or a typed error.
    enum Expected: Sendable, CustomStringConvertible {
        case defaultImage
        case error
        var description: String { self == .defaultImage ? "the default image" : "an error" }
    }

    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let expected: Expected
        let chunks: @Sendable () -> [Chunk]
        var description: String { "\(name): \(expected)" }
    }

    static let invalid: [Case] = [
        // Incorrect chunks
        Case(name: "chunk_no_actl: missing acTL", expected: .defaultImage) {
            [ihdr(), idat(green), fctl(0), fdat(1, red), iend]
        },
        Case(name: "chunk_multi_actl: repeated acTL", expected: .defaultImage) {
            [ihdr(), actl(1), actl(1), idat(green), fctl(0), fdat(1, red), iend]
        },
        Case(name: "chunk_actl_after_idat: acTL after IDAT", expected: .defaultImage) {
            [ihdr(), idat(green), actl(1), fctl(0), fdat(1, red), iend]
        },
        Case(name: "chunk_no_fctl: missing fcTL", expected: .defaultImage) {
            [ihdr(), actl(1), idat(green), fdat(0, red), iend]
        },
        Case(name: "chunk_repeat_fctl: repeated fcTL", expected: .defaultImage) {
            [ihdr(), actl(1), idat(green), fctl(0), fctl(0), fdat(1, red), iend]
        },
        Case(name: "chunk_no_fdat: missing fdAT", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fctl(1), fdat(2, red), iend]
        },
        // num_frames
        Case(name: "syntax_num_frames_zero: 0 frames, no default image", expected: .error) {
            [ihdr(), actl(0), iend]
        },
        Case(name: "syntax_num_frames_zero_default: 0 frames", expected: .defaultImage) {
            [ihdr(), actl(0), idat(green), iend]
        },
        Case(name: "syntax_num_frames_low: num_frames too low", expected: .defaultImage) {
            [ihdr(), actl(1), idat(green), fctl(0), fdat(1, red), fctl(2), fdat(3, red), iend]
        },
        Case(name: "syntax_num_frames_high: num_frames too high by 1", expected: .defaultImage) {
            [ihdr(), actl(3), idat(green), fctl(0), fdat(1, red), fctl(2), fdat(3, red), iend]
        },
        Case(name: "num_frames too high by 2", expected: .defaultImage) {
            [ihdr(), actl(4), idat(green), fctl(0), fdat(1, red), fctl(2), fdat(3, red), iend]
        },
        Case(name: "syntax_num_frames_invalid: 2^31 + 1 frames", expected: .defaultImage) {
            [ihdr(), actl(0x8000_0001), idat(green), fctl(0), fdat(1, red), iend]
        },
        // Sequence numbers
        Case(name: "sequence_start: not starting from 0", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(1), fdat(2, red), fctl(3), fdat(4, red), iend]
        },
        Case(name: "sequence_gap: gap in sequence", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fdat(1, red), fctl(2), fdat(4, red), iend]
        },
        Case(name: "sequence_repeat: duplicated sequence number", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fdat(1, red), fctl(2), fdat(2, red), iend]
        },
        Case(name: "sequence_repeat_chunk: duplicated chunk", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fdat(1, red), fctl(2), fdat(3, red), fdat(3, red), iend]
        },
        Case(name: "sequence_reorder_chunk: reordered fdAT chunks", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fdat(1, red), fctl(2)] + splitFdat(3, 4, red, reversed: true) + [
                iend
            ]
        },
        Case(name: "sequence_reorder: reordered sequence numbers", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fdat(1, red), fctl(2)] + splitFdat(4, 3, red) + [iend]
        },
        Case(name: "sequence_fdat_fctl: separated fdAT and fcTL sequences", expected: .defaultImage) {
            [ihdr(), actl(2), idat(green), fctl(0), fdat(0, red), fctl(1), fdat(1, red), iend]
        },
        // Invalid image-data sizes: the default image is itself broken
        Case(name: "default image's fcTL size not matching IHDR", expected: .error) {
            [ihdr(), actl(2), fctl(0, height: height / 2), idat(red, height: height / 2), fctl(1), fdat(2, red), iend]
        },
    ]

    @Test(arguments: invalid)
    func anInvalidAnimationShowsItsDefaultImage(_ test: Case) throws {
        // Given a file from the suite's invalid cases
        let bytes = AnimationFiles.png(test.chunks())
        // When it is probed, decoded as a still and decoded as an animation
        let still = Result { () throws(DarkroomImageError) in
            try ImageDecoder().decode(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8))).bitmap
        }
        let thumbnail = Result { () throws(DarkroomImageError) in
            try ImageDecoder().decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(8), pixelFormat: .exactly(.rgba8))
            ).bitmap
        }
        let animation = Result { () throws(DarkroomImageError) -> [AnimatedFrame] in
            let decoder = try AnimatedImageDecoder(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
            var frames: [AnimatedFrame] = []
            while let frame = try decoder.nextFrame() { frames.append(frame) }
            return frames
        }
        switch test.expected {
        case .defaultImage:
            // Then the probe says one frame, and every output is the green default image
            #expect(try ImageProber.probe(bytes).frameCount == 1)
            #expect(try EncodedAnimation(bytes).info.frameCount == 1)
            for bitmap in [try still.get(), try thumbnail.get()] {
                #expect(Self.centre(of: bitmap) == Self.green, "\(test.name)")
            }
            #expect(try still.get().width == Self.width && still.get().height == Self.height)
            let frames = try animation.get()
            #expect(frames.count == 1, "\(test.name)")
            if let first = frames.first { #expect(Self.centre(of: first.bitmap) == Self.green) }
        case .error:
            // Then each is a typed error that names the problem, never an image
            for outcome in [still.map { _ in () }, thumbnail.map { _ in () }, animation.map { _ in () }] {
                guard case .failure(let error) = outcome else {
                    Issue.record("\(test.name) decoded")
                    continue
                }
                #expect(!error.message.isEmpty)
            }
        }
    }

    @Test func validFilesStillAnimate() throws {
        // Given the suite's two-frame file (red default image as frame 0, then a green frame), and sound one-frame
        // files
        let twoFrames = AnimationFiles.png([
            Self.ihdr(), Self.actl(2), Self.fctl(0), Self.idat(Self.red), Self.fctl(1), Self.fdat(2, Self.green),
            Self.iend,
        ])
        // When they are probed and decoded
        let decoder = try AnimatedImageDecoder(twoFrames, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        var colours: [[UInt8]] = []
        while let frame = try decoder.nextFrame() { colours.append(Self.centre(of: frame.bitmap)) }
        // Then the animation plays both frames in order
        #expect(try ImageProber.probe(twoFrames).frameCount == 2)
        #expect(colours == [Self.red, Self.green])
        // And the one-frame files show their one frame (green) whether or not the default image is part of it
        let split = AnimationFiles.png(
            [Self.ihdr(), Self.actl(1), Self.idat(Self.red), Self.fctl(0)] + Self.splitFdat(1, 2, Self.green)
                + [Self.iend])
        for file in [
            AnimationFiles.png([Self.ihdr(), Self.actl(1), Self.fctl(0), Self.idat(Self.green), Self.iend]),
            AnimationFiles.png([
                Self.ihdr(), Self.actl(1), Self.idat(Self.red), Self.fctl(0), Self.fdat(1, Self.green), Self.iend,
            ]),
            split,
        ] {
            let bitmap = try ImageDecoder().decode(file, options: DecodeOptions(pixelFormat: .exactly(.rgba8))).bitmap
            #expect(Self.centre(of: bitmap) == Self.green)
        }
    }

    static func centre(of bitmap: Bitmap) -> [UInt8] {
        let p = bitmap.row(bitmap.height / 2).assumingMemoryBound(to: UInt8.self) + 4 * (bitmap.width / 2)
        return [p[0], p[1], p[2], p[3]]
    }
}
