/// APNG's animation chunks, which libspng does not read: `acTL` (frame and play counts), each frame's `fcTL`
/// (rectangle, delay, dispose and blend operations) and the `IDAT`/`fdAT` chunks holding its data. Each frame
/// is handed to libspng as a standalone PNG (``framePNG(_:in:)``): the file's `IHDR` with the frame's size, its
/// `PLTE` and `tRNS`, the frame's data as one `IDAT`, and `IEND`.
///
/// A file that breaks the specification's rules for these chunks — `acTL` declaring 0 frames, more or fewer than
/// its `fcTL`s, or a count past 2^31 − 1; a second `acTL` or one after `IDAT`; sequence numbers that do not run
/// 0, 1, 2… over the `fcTL` and `fdAT` chunks; a frame without data, outside the canvas, or with an unknown dispose
/// or blend operation — reads as ``Reading/defaultImage(reason:)``: it is shown as its default image (the `IDAT`
/// image) and is not animated, as the specification recommends and browsers do. Errors of the PNG itself (its
/// signature, `IHDR`) and limits still throw.
///
/// Truncated files keep their complete frames: a frame counts once the chunk after its data has been read whole.
/// Cost: one walk over the chunk headers; memory: one small record per frame.
struct APNGReader {
    /// One frame as its `fcTL` states it.
    struct Frame {
        var x: Int, y: Int, width: Int, height: Int
        /// 0 none, 1 background (clear to transparent), 2 previous.
        var dispose: Int
        /// 0 source (replace), 1 over (alpha-blend).
        var blend: Int
        var durationMilliseconds: Int
        /// The frame's compressed data: `IDAT` payloads, or `fdAT` payloads after their sequence number.
        var data: [Range<Int>] = []
    }

    /// What reading a file's animation chunks found.
    enum Reading {
        /// A valid animation.
        case animation(APNGReader)
        /// The animation chunks break the specification (`reason` says how): the file is its default image.
        case defaultImage(reason: String)
    }

    let width: Int
    let height: Int
    /// `acTL`'s `num_plays` (0 = forever).
    let plays: Int
    /// `acTL`'s `num_frames`: the frames' count in a complete file, more than ``frames`` holds in a truncated one.
    let declaredFrameCount: Int
    let frames: [Frame]
    /// Whether the data ended before `IEND` (``frames`` then holds the complete ones).
    let isTruncated: Bool
    /// The 13-byte `IHDR` payload.
    private let header: Range<Int>
    /// Whole `PLTE` and `tRNS` chunks (length, type, payload, CRC), copied into every frame's PNG.
    private let paletteChunks: [Range<Int>]

    /// Reads the animation's structure for a decode: as ``read(_:isComplete:limits:)`` on a whole file, with a
    /// stop reported as the decode's error (a file that ends early is `.truncated`).
    static func opening(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) -> Reading {
        do throws(ProbeStop) {
            return try read(bytes, isComplete: true, limits: limits)
        } catch {
            switch error {
            case .failed(let failure): throw failure
            case .needMoreData: throw ImageProber.truncatedError(count: bytes.count)
            }
        }
    }

    /// Walks every chunk of a PNG that has an `acTL`.
    ///
    /// - Parameter isComplete: whether `bytes` is the whole file; when it is not and `IEND` has not been reached,
    ///   the walk asks for more (`needMoreData`) instead of reading the file as truncated.
    /// - Throws: ``ProbeStop`` for a broken signature or `IHDR`, more frames than ``DecodeLimits/maxFrames``, or
    ///   a truncated file without one complete frame.
    static func read(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> Reading
    {
        let reader = ByteReader(bytes)
        guard reader.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) else {
            throw .corrupt("not a PNG signature")
        }
        guard try reader.u32be(12) == Chunk.ihdr, try reader.u32be(8) == 13 else {
            throw .corrupt("PNG does not start with IHDR")
        }
        let width = try reader.u32be(16)
        let height = try reader.u32be(20)
        var position = 33
        var declared: Int?
        var plays = 0
        var palette: [Range<Int>] = []
        var frames: [Frame] = []
        var current: Frame?
        var seenIDAT = false
        var sequence = 0
        var truncated = true
        /// The next sequence number, which the chunk at `payload` must carry.
        func sequenceBreak(at payload: Int, in type: String) throws(ProbeStop) -> Reading? {
            let number = try reader.u32be(payload)
            guard number == sequence else {
                return .defaultImage(reason: "\(type) has sequence number \(number) where \(sequence) was due")
            }
            sequence += 1
            return nil
        }
        walk: while position + 12 <= bytes.count {
            let length = try reader.u32be(position)
            let type = try reader.u32be(position + 4)
            let payload = position + 8
            guard length <= bytes.count - payload - 4 else { break }  // cut inside the chunk
            switch type {
            case Chunk.actl:
                guard !seenIDAT else { return .defaultImage(reason: "acTL comes after IDAT") }
                guard declared == nil else { return .defaultImage(reason: "the file has a second acTL") }
                guard length >= 8 else { return .defaultImage(reason: "acTL is \(length) bytes, expected 8") }
                let count = try reader.u32be(payload)
                guard count > 0, count <= 0x7FFF_FFFF else {
                    return .defaultImage(reason: "acTL declares \(count) frames, outside 1…2³¹−1")
                }
                declared = count
                plays = try reader.u32be(payload + 4)
            case Chunk.plte, Chunk.trns:
                palette.append(position..<(payload + length + 4))
            case Chunk.fctl:
                guard length >= 26 else { return .defaultImage(reason: "fcTL is \(length) bytes, expected 26") }
                if let broken = try sequenceBreak(at: payload, in: "fcTL") { return broken }
                if let done = current {
                    if let reason = problem(done, frames.count) { return .defaultImage(reason: reason) }
                    frames.append(done)
                }
                if frames.count >= limits.maxFrames { throw .tooManyFrames(frames.count + 1, limits) }
                let numerator = try reader.u16be(payload + 20)
                let denominator = try reader.u16be(payload + 22)
                let frame = Frame(
                    x: try reader.u32be(payload + 12), y: try reader.u32be(payload + 16),
                    width: try reader.u32be(payload + 4), height: try reader.u32be(payload + 8),
                    dispose: try reader.u8(payload + 24), blend: try reader.u8(payload + 25),
                    durationMilliseconds: Int(
                        (Double(numerator) * 1000 / Double(denominator == 0 ? 100 : denominator)).rounded()))
                guard frame.width > 0, frame.height > 0, frame.x + frame.width <= width,
                    frame.y + frame.height <= height
                else {
                    return .defaultImage(reason: "frame \(frames.count) lies outside the \(width)×\(height) canvas")
                }
                if frames.isEmpty, !seenIDAT,
                    frame.x != 0 || frame.y != 0 || frame.width != width || frame.height != height
                {
                    return .defaultImage(reason: "the default image's fcTL does not cover the canvas")
                }
                current = frame
            case Chunk.idat:
                seenIDAT = true
                if frames.isEmpty, current != nil { current?.data.append(payload..<(payload + length)) }
            case Chunk.fdat:
                guard length >= 4 else { return .defaultImage(reason: "fdAT is \(length) bytes, expected at least 4") }
                if let broken = try sequenceBreak(at: payload, in: "fdAT") { return broken }
                guard current != nil, seenIDAT else { return .defaultImage(reason: "fdAT without a frame control") }
                current?.data.append((payload + 4)..<(payload + length))
            case Chunk.iend:
                truncated = false
                break walk
            default:
                break
            }
            position = payload + length + 4
        }
        if truncated, !isComplete {
            throw .needMoreData(atLeast: max(bytes.count + 1, position + 12))
        }
        guard let declared else { return .defaultImage(reason: "the file has no acTL") }
        if !truncated, let done = current {
            if let reason = problem(done, frames.count) { return .defaultImage(reason: reason) }
            frames.append(done)
        }
        guard !frames.isEmpty else {
            if truncated { throw .needMoreData(atLeast: bytes.count + 1) }
            return .defaultImage(reason: "the file has no fcTL")
        }
        guard frames.count == declared || (truncated && frames.count < declared) else {
            return .defaultImage(reason: "acTL declares \(declared) frames, the file holds \(frames.count)")
        }
        return .animation(
            APNGReader(
                width: width, height: height, plays: plays, declaredFrameCount: declared, frames: frames,
                isTruncated: truncated || frames.count < declared, header: 16..<29, paletteChunks: palette))
    }

    /// What makes a finished frame break the specification, or nil.
    private static func problem(_ frame: Frame, _ index: Int) -> String? {
        guard !frame.data.isEmpty else { return "frame \(index) has no image data" }
        guard frame.dispose <= 2, frame.blend <= 1 else {
            return "frame \(index) has dispose_op \(frame.dispose), blend_op \(frame.blend)"
        }
        return nil
    }

    /// A standalone PNG holding `frame` (see the type's summary). Its CRCs are left zero: the decoder is told to
    /// use chunks without checking them, the data being covered by zlib's own checksum.
    func framePNG(_ frame: Frame, in bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let dataLength = frame.data.reduce(0) { $0 + $1.count }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png.reserveCapacity(8 + 25 + paletteChunks.reduce(0) { $0 + $1.count } + 12 + dataLength + 12)
        func append32(_ value: Int) {
            for shift in stride(from: 24, through: 0, by: -8) { png.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        append32(13)
        append32(Chunk.ihdr)
        append32(frame.width)
        append32(frame.height)
        png.append(contentsOf: bytes[(header.lowerBound + 8)..<header.upperBound])
        append32(0)
        for chunk in paletteChunks { png.append(contentsOf: bytes[chunk]) }
        append32(dataLength)
        append32(Chunk.idat)
        for range in frame.data { png.append(contentsOf: bytes[range]) }
        append32(0)
        append32(0)
        append32(Chunk.iend)
        append32(0)
        return png
    }

    private enum Chunk {
        static let ihdr = 0x4948_4452
        static let plte = 0x504C_5445
        static let trns = 0x7452_4E53
        static let actl = 0x6163_544C
        static let fctl = 0x6663_544C
        static let idat = 0x4944_4154
        static let fdat = 0x6664_4154
        static let iend = 0x4945_4E44
    }
}
