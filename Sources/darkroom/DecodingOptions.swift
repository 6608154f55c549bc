import ArgumentParser
import DarkroomImage
import DarkroomVideo
import DarkroomWorkers

/// Where a command decodes: in confined decode workers (the default for every command that decodes files people
/// have) or, with `--in-process`, in the command's own process.
struct DecodingOptions: ParsableArguments {
    @Flag(
        help:
            "Decode in this process instead of confined decode workers (for benchmarks; a decoder's fault then ends the run)."
    )
    var inProcess = false

    /// The decoder a command decodes with: videos included, and with `--in-process` absent, its decodes handed to a
    /// pool of at most `workers` confined worker processes at nice value `niceness`, started now (they load while
    /// the command plans) unless `prestart` is false (a command that may not decode at all starts one when needed).
    /// - Throws: when the worker executable is missing (never a silent fall-back to decoding unconfined).
    func decoder(workers: Int, niceness: Int32 = 0, prestart: Bool = true) throws -> ImageDecoder {
        var decoder = VideoDecoder.imageDecoder
        guard !inProcess else { return decoder }
        var configuration = DecodeWorkerPool.Configuration(workers: workers)
        configuration.niceness = niceness
        try configuration.checkExecutable()
        let pool = DecodeWorkerPool(configuration: configuration)
        if prestart { pool.prestart() }
        decoder.isolation = pool
        return decoder
    }
}

extension ImageDecoder {
    /// The decode workers this decoder hands its decodes to, if any.
    var workers: DecodeWorkerPool? { isolation as? DecodeWorkerPool }

    /// What a command's JSON summary says of its decoding: `decoding` (`workers` or `in-process`) and
    /// `worker_peak_rss_bytes` (the largest worker's peak so far; 0 in-process).
    var decodingSummary: [String: Any] {
        [
            "decoding": workers == nil ? "in-process" : "workers",
            "worker_peak_rss_bytes": workers?.workersPeakRSS().max() ?? 0,
        ]
    }
}
