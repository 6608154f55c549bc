import CDarkroomVideo
import DarkroomImage
import Foundation

/// One open video: FFmpeg's handle over in-memory bytes or a file Darkroom opened itself, with the budgets of
/// `DecodeLimits` set on it. FFmpeg reads only these bytes (see the C shim's contract).
///
/// Not thread-safe: a decode opens one, uses it on its own thread and drops it (the handle is freed in `deinit`).
/// Opening reads the container's header (for an MP4 its sample tables, whose size grows with the clip's length);
/// no frame is decoded until asked.
final class VideoFile {
    private let handle: OpaquePointer
    /// What the header says.
    let info: dr_video_info
    /// The file this opened, closed with the handle; -1 for bytes.
    private let descriptor: Int32
    /// The ranges a remote file is read through (kept alive for the handle's reads), with the last read's error.
    private let rangeSource: RangeSource?
    private let limits: DecodeLimits

    /// Opens `bytes`, which must outlive this object.
    init(bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw DarkroomImageError(.empty, "the video data is empty")
        }
        guard bytes.count <= limits.maxInputBytes else {
            throw DarkroomImageError(
                .limitExceeded, "the input is \(bytes.count) bytes, over the limit of \(limits.maxInputBytes)")
        }
        var budget = Self.budget(limits)
        var opened: OpaquePointer?
        var info = dr_video_info()
        let message = Self.message { msg, len in
            dr_video_open_memory(
                base.assumingMemoryBound(to: UInt8.self), bytes.count, &budget, &opened, &info, msg, len)
        }
        guard let handle = opened else { throw Self.error(message.status, message.text, "open the video") }
        self.handle = handle
        self.info = info
        self.descriptor = -1
        self.rangeSource = nil
        self.limits = limits
        try checkSize()
    }

    /// Opens the file `ranges` reads where it lies (a remote video), reading only the ranges FFmpeg asks for, on
    /// the calling thread (each read blocks it). A read's typed error is the open's (or a decode's) error.
    init(ranges: any ByteRangeReading, limits: DecodeLimits) throws(DarkroomImageError) {
        guard ranges.size > 0 else { throw DarkroomImageError(.empty, "\(ranges.name) is empty") }
        let source = RangeSource(ranges)
        var budget = Self.budget(limits)
        var opened: OpaquePointer?
        var info = dr_video_info()
        let context = Unmanaged.passUnretained(source).toOpaque()
        let message = Self.message { msg, len in
            dr_video_open_reader(RangeSource.read, context, ranges.size, &budget, &opened, &info, msg, len)
        }
        guard let handle = opened else {
            throw source.failure ?? Self.error(message.status, message.text, "open the video")
        }
        self.handle = handle
        self.info = info
        self.descriptor = -1
        self.rangeSource = source
        self.limits = limits
        try checkSize()
    }

    /// A remote file's ranges as the C shim's reader: the callback's context, alive as long as the handle.
    final class RangeSource {
        let ranges: any ByteRangeReading
        /// Why the last read failed: the error a caller sees instead of FFmpeg's I/O error.
        var failure: DarkroomImageError?

        init(_ ranges: any ByteRangeReading) { self.ranges = ranges }

        /// The shim's `dr_video_read_fn`: copies up to `count` bytes at `offset` into `buffer`.
        static let read: dr_video_read_fn = { context, offset, buffer, count in
            guard let context, let buffer, count > 0 else { return -1 }
            let source = Unmanaged<RangeSource>.fromOpaque(context).takeUnretainedValue()
            do throws(DarkroomImageError) {
                let bytes = try source.ranges.read(at: offset, count: Int(count))
                let n = min(bytes.count, Int(count))
                bytes.withUnsafeBytes { buffer.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: n) }
                return Int64(n)
            } catch {
                source.failure = error
                return -1
            }
        }
    }

    /// Opens the file at `path` (read with `pread` as FFmpeg asks; never read whole), or only the bytes `range` of it
    /// (a clip stored inside a photo), which FFmpeg then sees as a file of its own. A video file may be larger than
    /// `DecodeLimits/maxInputBytes`: only what the decode needs is read.
    init(path: String, range: Range<Int64>? = nil, limits: DecodeLimits) throws(DarkroomImageError) {
        let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
        let bytes: Range<Int64>
        do throws(DarkroomImageError) {
            bytes = try Self.clip(range, in: size, of: path)
        } catch {
            close(fd)
            throw error
        }
        var budget = Self.budget(limits)
        var opened: OpaquePointer?
        var info = dr_video_info()
        let message = Self.message { msg, len in
            dr_video_open_file(fd, bytes.lowerBound, Int64(bytes.count), &budget, &opened, &info, msg, len)
        }
        guard let handle = opened else {
            close(fd)
            throw Self.error(message.status, message.text, "open the video")
        }
        self.handle = handle
        self.info = info
        self.descriptor = fd
        self.rangeSource = nil
        self.limits = limits
        try checkSize()
    }

    /// The bytes `range` (nil: all) of the file at `path`, `size` bytes long, checked to lie inside it: what a
    /// video is read from, here or in a decode worker.
    /// - Throws: `.empty` for an empty file, `.truncated` for a range outside it or of no bytes.
    static func clip(_ range: Range<Int64>?, in size: Int, of path: String) throws(DarkroomImageError)
        -> Range<Int64>
    {
        guard size > 0 else { throw DarkroomImageError(.empty, "\(path) is empty or unreadable") }
        let bytes = range ?? 0..<Int64(size)
        guard bytes.lowerBound >= 0, bytes.upperBound <= Int64(size), !bytes.isEmpty else {
            throw DarkroomImageError(
                .truncated,
                "the video at bytes \(bytes.lowerBound)..<\(bytes.upperBound) lies outside \(path) (\(size) bytes)")
        }
        return bytes
    }

    deinit {
        dr_video_close(handle)
        if descriptor >= 0 { close(descriptor) }
    }

    private func checkSize() throws(DarkroomImageError) {
        let longest = max(Int(info.coded_width), Int(info.coded_height))
        guard longest <= limits.maxDimension else {
            throw DarkroomImageError(
                .limitExceeded,
                "the video's frames are \(longest) pixels long, over maxDimension (\(limits.maxDimension))")
        }
    }

    /// The C shim's budgets for `limits`: the deadline starts now.
    private static func budget(_ limits: DecodeLimits) -> dr_video_limits {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline =
            Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
            + Int64(max(0, limits.maxVideoDecodeSeconds) * 1e9)
        return dr_video_limits(
            deadline_ns: deadline, max_packets: Int64(max(1, limits.maxVideoPacketsPerFrame)),
            max_pixels: Int64(limits.maxSourcePixels), threads: 1)
    }

    // MARK: Decoding

    /// Gives the next call a fresh `DecodeLimits/maxVideoDecodeSeconds` (a handle kept open to play frames as they
    /// are shown: the budget is a frame's, not the whole play's).
    func renewDeadline() {
        dr_video_set_deadline(handle, Self.budget(limits).deadline_ns)
    }

    /// Opens the decoder, asking it for 1/2^`lowres` of the coded size where it can decode smaller.
    func openDecoder(lowres: Int) throws(DarkroomImageError) {
        try run("open the decoder") { msg, len in dr_video_open_decoder(handle, Int32(lowres), msg, len) }
    }

    /// Seeks to the keyframe at or before `seconds`.
    func seek(to seconds: Double) throws(DarkroomImageError) {
        try run("seek") { msg, len in dr_video_seek(handle, seconds, msg, len) }
    }

    /// Decodes the next frame; its presentation time in seconds (nil when it has none), or `.end` at the end.
    /// `skippingBefore`: a caller that shows no frame presented before that time (in seconds) lets the decoder skip
    /// those of them no other frame refers to (non-reference B-frames, as a rule); they produce no step.
    func nextFrame(keyframesOnly: Bool, skippingBefore: Double = 0) throws(DarkroomImageError) -> FrameStep {
        var seconds = 0.0
        let skip = skippingBefore.isFinite ? max(0, skippingBefore) : 0
        let result = Self.message { msg, len in
            dr_video_decode_frame(handle, keyframesOnly ? 1 : 0, skip, &seconds, msg, len)
        }
        switch result.status {
        case Int32(DR_VIDEO_OK.rawValue): return .frame(seconds >= 0 ? seconds : nil)
        case Int32(DR_VIDEO_ERR_END.rawValue): return .end
        default: throw Self.error(result.status, result.text, "decode a frame")
        }
    }

    enum FrameStep: Equatable {
        case frame(Double?)
        case end
    }

    /// The current frame's decoded size.
    var frameSize: (width: Int, height: Int) {
        var w: Int32 = 0
        var h: Int32 = 0
        _ = dr_video_frame(handle, &w, &h, nil)
        return (Int(w), Int(h))
    }

    /// Scales `region` of the current frame (its decoded pixels) into `bitmap`'s memory: `pixels` one of the C
    /// shim's layouts, whose bytes per pixel `bitmap` must match.
    func scale(
        region: (x: Int, y: Int, width: Int, height: Int), into base: UnsafeMutableRawPointer, bytesPerRow: Int,
        width: Int, height: Int, pixels: dr_video_pixels, filter: dr_video_filter
    ) throws(DarkroomImageError) {
        try run("scale the frame") { msg, len in
            dr_video_scale(
                handle, Int32(region.x), Int32(region.y), Int32(region.width), Int32(region.height),
                base.assumingMemoryBound(to: UInt8.self), bytesPerRow, Int32(width), Int32(height),
                Int32(pixels.rawValue), Int32(filter.rawValue), msg, len)
        }
    }

    // MARK: Status codes

    private func run(_ what: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(DarkroomImageError) {
        let result = Self.message(body)
        guard result.status == Int32(DR_VIDEO_OK.rawValue) else {
            throw rangeSource?.failure ?? Self.error(result.status, result.text, what)
        }
    }

    private static func message(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> (status: Int32, text: String) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            buffer.initialize(repeating: 0)
            let status = body(buffer.baseAddress!, 256)
            return (status, String(cString: buffer.baseAddress!))
        }
    }

    private static func error(_ status: Int32, _ text: String, _ what: String) -> DarkroomImageError {
        let codec = text.isEmpty ? nil : text
        switch UInt32(bitPattern: status) {
        case DR_VIDEO_ERR_UNSUPPORTED.rawValue:
            return DarkroomImageError(.unsupportedFeature, text.isEmpty ? "cannot \(what)" : text)
        case DR_VIDEO_ERR_TRUNCATED.rawValue:
            return DarkroomImageError(.truncated, "the video ends early: could not \(what)", codecMessage: codec)
        case DR_VIDEO_ERR_NO_MEMORY.rawValue:
            return DarkroomImageError(.outOfMemory, "out of memory trying to \(what)", codecMessage: codec)
        case DR_VIDEO_ERR_LIMIT.rawValue:
            return DarkroomImageError(
                .limitExceeded, text.isEmpty ? "a video limit stopped the attempt to \(what)" : text)
        case DR_VIDEO_ERR_IO.rawValue:
            return DarkroomImageError(.io, "reading the video failed trying to \(what)", codecMessage: codec)
        case DR_VIDEO_ERR_ARGUMENT.rawValue:
            return DarkroomImageError(.invalidArgument, "a bad argument trying to \(what)", codecMessage: codec)
        default:
            return DarkroomImageError(.corrupt, "the video is damaged: could not \(what)", codecMessage: codec)
        }
    }
}
