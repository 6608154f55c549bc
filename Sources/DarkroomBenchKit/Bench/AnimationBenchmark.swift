import ArgumentParser
import Darkroom
import DarkroomImage
import DarkroomSupport
import Foundation

/// `darkroom bench animation`: a real-time render loop over many animated thumbnails at once, each an
/// ``AnimationPlayer`` sharing one frame budget, decoding on one pool of threads.
///
/// Every tick (1/fps s, paced by the monotonic clock) asks each player for its frame. Reported: ticks the loop
/// itself missed (it ran past the next tick's deadline), lookups that found their frame not yet decoded (a frame
/// shown late), frames skipped, frames decoded and shown, the budget and the most the buffers held together,
/// process CPU seconds and peak RSS. Players are prepared (first frames decoded) before the clock starts, as a
/// view does while its cell scrolls in.
package struct AnimationBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    @Option(help: "Animated files, cycled over the players (default: every animation in ../shared/photos/animated).")
    package var photos: String?
    @Option(help: "Players at once.") package var players = 20
    @Option(help: "The frame budget all players share, in MiB (split evenly).") package var budgetMb = 16
    @Option(help: "Render-loop rate.") package var fps = 60
    @Option(help: "How long to play, in seconds.") package var seconds = 10.0
    @Option(help: "Thumbnail size (longest side).") package var size = 128
    @Flag(help: "Print JSON.") package var json = false

    /// The frame budget all players share, in bytes.
    var budgetBytes: Int { budgetMb << 20 }

    /// Checks the settings before a run.
    package func validate() throws {
        guard players > 0, budgetMb > 0, fps > 0, seconds > 0, size > 0 else {
            throw ValidationError("--players, --budget-mb, --fps, --seconds and --size must be positive")
        }
    }

    /// Runs the benchmark and prints its report (JSON with ``json``).
    package func run() throws {
        guard let root = BenchPhotos.root() else { throw BenchError("sample photos not found; set DARKROOM_PHOTOS") }
        let files = BenchPhotos.files(in: photos ?? root + "/animated").filter {
            [".gif", ".webp", ".png"].contains(where: $0.hasSuffix)
        }
        guard !files.isEmpty else { throw BenchError("no animations found") }
        let animations = try files.map { try EncodedAnimation(FileBytes.read($0)) }
        let memory = try zip(files, animations).map { file, animation in
            try Self.decodeMemory(animation, name: (file as NSString).lastPathComponent, size: size)
        }
        let share = budgetBytes / max(1, players)
        let cpu0 = Self.cpuSeconds()
        let list = try (0..<players).map { i in
            try AnimationPlayer(
                animations[i % animations.count], options: DecodeOptions(size: .maxPixelSize(size)),
                budgetBytes: share)
        }
        for player in list { player.prepare() }
        let readyBy = MonotonicClock.seconds() + 30
        while list.contains(where: \.isDecoding), MonotonicClock.seconds() < readyBy { usleep(1000) }

        let interval = 1 / Double(fps)
        let ticks = Int(seconds * Double(fps))
        let start = MonotonicClock.seconds()
        var missedTicks = 0
        var worstTickMs = 0.0
        for tick in 0..<ticks {
            let deadline = start + Double(tick) * interval
            let now = MonotonicClock.seconds()
            if now - deadline > interval { missedTicks += 1 }
            for player in list { _ = player.frame(at: now - start) }
            worstTickMs = max(worstTickMs, (MonotonicClock.seconds() - now) * 1000)
            let next = start + Double(tick + 1) * interval
            let wait = next - MonotonicClock.seconds()
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        }
        let wall = MonotonicClock.seconds() - start
        let statistics = list.map(\.statistics)
        for player in list { player.stop() }
        let cpu = Self.cpuSeconds() - cpu0
        let results: [String: Any] = [
            "benchmark": "animation", "players": players, "fps": fps, "seconds": seconds, "size": size,
            "budget_bytes": budgetBytes, "sources": files.map { ($0 as NSString).lastPathComponent },
            "ticks": ticks, "missed_ticks": missedTicks, "worst_tick_ms": (worstTickMs * 100).rounded() / 100,
            "late_lookups": statistics.reduce(0) { $0 + $1.lateLookups },
            "frames_skipped": statistics.reduce(0) { $0 + $1.framesSkipped },
            "frames_shown": statistics.reduce(0) { $0 + $1.framesShown },
            "frames_decoded": statistics.reduce(0) { $0 + $1.framesDecoded },
            "peak_buffered_bytes_sum": statistics.reduce(0) { $0 + $1.peakBufferedBytes },
            "budget_bytes_sum": statistics.reduce(0) { $0 + $1.budgetBytes },
            "errors": statistics.compactMap { $0.error.map { "\($0)" } },
            "decode_memory": memory,
            "wall_seconds": (wall * 1000).rounded() / 1000, "cpu_seconds": (cpu * 1000).rounded() / 1000,
            "cpu_cores_used": ((cpu / wall) * 100).rounded() / 100, "peak_rss_bytes": ProcessStats.peakRSSBytes,
        ]
        if json {
            print(JSONLine.encode(results))
        } else {
            for key in results.keys.sorted() { print("\(key): \(results[key]!)") }
        }
    }

    /// Every frame of `animation` decoded at `size` one after another (nothing kept), under a ``PixelMemory`` meter:
    /// the peak pixel memory against one source canvas and one output frame, and the time per frame.
    static func decodeMemory(_ animation: EncodedAnimation, name: String, size: Int) throws -> [String: Any] {
        let start = MonotonicClock.seconds()
        let ((frames, output), meter) = try PixelMemory.measure { () throws(DarkroomImageError) -> (Int, Int) in
            let decoder = try AnimatedImageDecoder(animation, options: DecodeOptions(size: .maxPixelSize(size)))
            var frames = 0
            while try decoder.nextFrame() != nil { frames += 1 }
            return (frames, decoder.outputWidth * decoder.outputHeight * 4)
        }
        let elapsed = MonotonicClock.seconds() - start
        let canvas = animation.info.canvasWidth * animation.info.canvasHeight * 4
        return [
            "file": name, "frames": frames, "canvas_bytes": canvas, "output_frame_bytes": output,
            "peak_pixel_bytes": meter.peakBytes,
            "peak_over_canvas_plus_frame": (Double(meter.peakBytes) / Double(canvas + output) * 100).rounded() / 100,
            "ms_per_frame": (elapsed / Double(max(1, frames)) * 100_000).rounded() / 100,
            "all_frames_full_size_bytes": canvas * frames,
        ]
    }

    /// User + system CPU seconds of this process.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }
}
