import ArgumentParser
import DarkroomImage
import DarkroomSupport
import DarkroomVideo
import Foundation
import Synchronization

extension HDROutputMode: ExpressibleByArgument {}

/// `darkroom thumb PATH... --max-pixel-size N --out DIR`: thumbnails on a bounded pool of threads.
struct ThumbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumb",
        abstract: "Write a downsampled thumbnail of each image (files, or folders searched recursively).")

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case auto, jpeg, png, webp, avif, gif, jxl, ico
    }

    @Argument(help: "Image files and folders.") var paths: [String]
    @Option(help: "Longest side of each thumbnail, in pixels.") var maxPixelSize: Int
    @Option(help: "Output folder (created if missing).") var out: String
    @Option(
        help: """
            Output format: auto (JPEG, or PNG for images with alpha; animated WebP for animations), jpeg, png, webp, \
            avif, gif, jxl or ico (at most 256 px; animations only keep their frames as webp or gif).
            """) var format: OutputFormat = .auto
    @Option(help: "Quality 1-100 for JPEG, WebP and AVIF.") var quality: Int = 85
    @Option(help: "AVIF encoder speed 0-10 (faster is larger).") var avifSpeed: Int = 8
    @Flag(
        help:
            "Keep the source's colour profile (pixels unconverted, profile written into the output) instead of converting to sRGB."
    )
    var keepColorProfile = false
    @Option(
        help: """
            HDR sources: sdr (tone-mapped, or a gain map's base image), keep (a JPEG of an Ultra HDR photo stays \
            Ultra HDR, its gain map resized alongside; an AVIF of a PQ or HLG photo stays PQ or HLG) or apply (a 10-bit PQ \
            AVIF for HDR displays, a gain map applied or PQ/HLG light rolled off for --headroom).
            """) var hdr: HDROutputMode = .sdr
    @Option(
        help: """
            With --hdr apply: the display's headroom in stops (log2 of its peak over SDR white), 0-10; default a gain \
            map's full headroom, or a PQ/HLG photo's whole range.
            """) var headroom: Double?
    @Option(help: "Which page of a multi-page file (TIFF) to thumbnail, from 0; a file without it fails.")
    var page: Int = 0
    @Option(
        help: """
            Videos: the frame at this many seconds from the start (the first at or after it) instead of the poster \
            frame (a keyframe near a tenth of the way in that is not black or blank).
            """) var time: Double?
    @Flag(
        help: """
            Videos, Motion Photos and Live Photos: write the motion as an animation (animated WebP, or GIF with \
            --format gif): a few seconds at display size, from --time when given (default: the poster frame, or a \
            photo's still).
            """) var motion = false
    @Option(help: "With --motion: the longest stretch of the clip shown, in seconds.") var motionSeconds: Double = 3
    @Option(help: "With --motion: frames a second.") var motionFPS: Double = 10
    @Option(help: "Animations: keep only the first N frames.") var frames: Int?
    @Flag(help: "Animations: write the first frame only, as a still image.") var still = false
    @Option(help: "Worker threads (default: active cores).") var jobs: Int?
    @OptionGroup var decoding: DecodingOptions
    @Flag(help: "Print the summary as JSON.") var json = false

    func validate() throws {
        guard maxPixelSize > 0 else { throw ValidationError("--max-pixel-size must be positive") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1...100") }
        guard (0...10).contains(avifSpeed) else { throw ValidationError("--avif-speed must be 0...10") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        guard page >= 0 else { throw ValidationError("--page must be 0 or more") }
        if let time, !(time >= 0 && time.isFinite) { throw ValidationError("--time must be a number of seconds ≥ 0") }
        if frames != nil && still { throw ValidationError("--frames and --still exclude each other") }
        if motion && still { throw ValidationError("--motion and --still exclude each other") }
        if motion, ![.auto, .webp, .gif].contains(format) {
            throw ValidationError("--motion writes an animation: leave --format auto or give webp or gif")
        }
        if motion, hdr == .apply { throw ValidationError("--motion writes SDR frames: --hdr apply does not apply") }
        guard motionSeconds > 0, motionSeconds <= 60 else {
            throw ValidationError("--motion-seconds must be in (0, 60]")
        }
        guard motionFPS > 0, motionFPS <= 60 else { throw ValidationError("--motion-fps must be in (0, 60]") }
        if let headroom {
            guard hdr == .apply else { throw ValidationError("--headroom needs --hdr apply") }
            guard (0...10).contains(headroom) else { throw ValidationError("--headroom must be 0...10") }
        }
        if hdr == .apply, format != .auto, format != .avif {
            throw ValidationError("--hdr apply writes AVIF (PQ): leave --format auto or give avif")
        }
    }

    func run() throws {
        let start = MonotonicClock.seconds()
        let workers = jobs ?? ProcessStats.activeCores
        let decoder = try decoding.decoder(workers: workers)
        let isolated = decoder.isolation == nil ? nil : decoder
        let plan = try ThumbPlan(paths: paths, outputDirectory: out, format: hdr == .apply ? .avif : format)
        try plan.createOutputFolders()
        let progress = ProgressBar(total: plan.jobs.count, enabled: !json && isatty(2) != 0)
        let failures = Locked<[(String, DarkroomImageError)]>(plan.failures)
        let options = DecodeOptions(
            geometry: OutputGeometry(size: .maxPixelSize(maxPixelSize), page: page, time: time),
            colorSpace: keepColorProfile ? .original : .sRGB)
        let baseEncodeOptions = EncodeOptions(quality: quality, speed: avifSpeed)
        let jobs = plan.jobs
        // One read buffer a worker, kept across files: later reads reuse its pages instead of faulting fresh ones
        let buffers = Locked<[FileReadBuffer]>([])
        WorkQueue.run(count: jobs.count, workers: workers) { i in
            let job = jobs[i]
            let buffer = buffers.withLock { $0.popLast() } ?? FileReadBuffer()
            defer { buffers.withLock { $0.append(buffer) } }
            do {
                let sourceFormat = try ImageProber.format(ofFileAt: job.input, limits: options.limits)
                if motion {
                    try writeMotion(
                        job, sourceFormat: sourceFormat, decoder: decoder, options: options, encode: baseEncodeOptions)
                } else if try !writeHDR(
                    job, sourceFormat: sourceFormat, decoder: decoder, buffer: buffer, options: options,
                    encode: baseEncodeOptions)
                {
                    if let isolated {
                        try writeIsolated(
                            job, sourceFormat: sourceFormat, decoder: isolated, options: options,
                            encode: baseEncodeOptions)
                    } else {
                        try writeInProcess(
                            job, sourceFormat: sourceFormat, buffer: buffer, options: options,
                            encode: baseEncodeOptions)
                    }
                }
            } catch {
                failures.withLock {
                    $0.append((job.input, error as? DarkroomImageError ?? DarkroomImageError(.io, "\(error)")))
                }
            }
            progress.advance()
        }
        progress.finish()
        let wall = MonotonicClock.seconds() - start
        let failed = failures.withLock { $0 }
        let images = jobs.count + plan.failures.count
        let summary: [String: Any] = decoder.decodingSummary.merging([
            "images": images, "succeeded": images - failed.count,
            "failures": failed.count, "skipped": plan.skipped, "wall_seconds": wall,
            "images_per_second": wall > 0 ? Double(images) / wall : 0, "peak_rss_bytes": ProcessStats.peakRSSBytes,
            "jobs": min(workers, max(images, 1)),
            "errors": failed.map { ["path": $0.0, "error": JSONLine.error($0.1)] },
        ]) { first, _ in first }
        if json {
            print(JSONLine.encode(summary))
        } else {
            for (path, e) in failed { FileHandle.standardError.write(Data("\(path): error: \(e)\n".utf8)) }
            print(
                String(
                    format: "%d images, %d failures, %d skipped, %.3f s, %.1f images/s, peak RSS %.1f MiB, %d jobs",
                    images, failed.count, plan.skipped, wall, wall > 0 ? Double(images) / wall : 0,
                    Double(ProcessStats.peakRSSBytes) / 1_048_576, min(workers, max(images, 1))))
        }
        if !failed.isEmpty { throw ExitCode(1) }
    }
}

/// Expands inputs into jobs and names outputs: `photo.jpg` → `photo.png`; when two inputs would get the same
/// name, each keeps its old extension (`photo.jpg.png`). Folders are mirrored below the output folder; files in
/// folders whose bytes are no supported image are skipped, files named explicitly always count.
struct ThumbPlan {
    struct Job: Sendable {
        var input: String
        var stem: String  // output path without extension
        var keepsExtension: Bool  // on a clash: stem + "." + old extension
        var oldExtension: String
        var fixed: ImageFileFormat?

        /// The format of a still thumbnail: GIF output is for animations, so a still asked for as GIF is a PNG.
        func format(hasAlpha: Bool) -> ImageFileFormat {
            fixed == .gif ? .png : fixed ?? (hasAlpha ? .png : .jpeg)
        }
        /// The format an animation keeps its frames in, nil when the chosen format is a still one.
        var animatedFormat: ImageFileFormat? {
            switch fixed {
            case nil, .webp: .webp
            case .gif: .gif
            case .jxl: .jxl
            case .ico: .ico
            default: nil
            }
        }
        func output(_ format: ImageFileFormat) -> String {
            let ext = format.fileExtension
            return keepsExtension && !oldExtension.isEmpty ? "\(stem).\(oldExtension).\(ext)" : "\(stem).\(ext)"
        }
    }

    var jobs: [Job] = []
    var failures: [(String, DarkroomImageError)] = []
    var skipped = 0

    init(paths: [String], outputDirectory: String, format: ThumbCommand.OutputFormat) throws {
        let fm = FileManager.default
        let fixed: ImageFileFormat? =
            switch format {
            case .auto: nil
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            case .gif: .gif
            case .jxl: .jxl
            case .ico: .ico
            }
        var found: [(input: String, relative: String)] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                failures.append((path, DarkroomImageError(.io, "\(path) does not exist")))
                continue
            }
            if isDirectory.boolValue {
                let root = URL(fileURLWithPath: path).standardizedFileURL.path
                let items = (fm.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
                for rel in items where !rel.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                    let full = root + "/" + rel
                    var sub: ObjCBool = false
                    guard fm.fileExists(atPath: full, isDirectory: &sub), !sub.boolValue else { continue }
                    // Folders may hold other files: keep those whose magic bytes name an image format (a broken
                    // image still counts, and fails).
                    guard Self.looksLikeImage(full) else {
                        skipped += 1
                        continue
                    }
                    found.append((full, rel))
                }
            } else {
                found.append((path, (path as NSString).lastPathComponent))
            }
        }
        var stems: [String: Int] = [:]
        var prepared: [(String, String, String)] = []
        for item in found {
            let rel = item.relative as NSString
            let stem = (outputDirectory as NSString).appendingPathComponent(rel.deletingPathExtension)
            stems[stem, default: 0] += 1
            prepared.append((item.input, stem, rel.pathExtension))
        }
        for (input, stem, ext) in prepared {
            jobs.append(
                Job(
                    input: input, stem: stem, keepsExtension: stems[stem, default: 0] > 1, oldExtension: ext,
                    fixed: fixed))
        }
        self.outputDirectory = outputDirectory
    }

    /// The output folder given to the plan.
    let outputDirectory: String

    /// Creates the output folder and the folders below it that the jobs write into. Planning alone creates nothing,
    /// so a caller that only wants the inputs (the thumbnail cache's fill) leaves no empty tree behind.
    func createOutputFolders() throws {
        let fm = FileManager.default
        let directories = Set(jobs.map { ($0.stem as NSString).deletingLastPathComponent })
        for dir in directories { try fm.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        if jobs.isEmpty { try fm.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true) }
    }
}

extension ThumbPlan {
    /// Whether the file's first bytes are the magic of a format Darkroom decodes.
    static func looksLikeImage(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        return head.withUnsafeBytes { ImageProber.format(of: $0) } != nil
    }
}

/// A one-line progress bar on standard error, redrawn at most every 100 ms. Thread-safe.
final class ProgressBar: Sendable {
    private struct State {
        var done = 0
        var lastDraw = 0.0
    }
    private let total: Int
    private let enabled: Bool
    private let state = Locked(State())

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func advance() {
        guard enabled else { return }
        let line: String? = state.withLock { s in
            s.done += 1
            let now = MonotonicClock.seconds()
            guard now - s.lastDraw > 0.1 || s.done == total else { return nil }
            s.lastDraw = now
            let width = 30
            let filled = total > 0 ? width * s.done / total : width
            return "\r[" + String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
                + "] \(s.done)/\(total)"
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
