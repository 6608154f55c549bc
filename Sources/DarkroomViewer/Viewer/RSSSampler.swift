import DarkroomSupport
import Dispatch

/// The process's resident set size, sampled once a second on a utility queue of its own (reading `/proc`), so the
/// drawing thread never pays for it. Cost: one small file read a second. Started and stopped by the drawing thread;
/// the timer's handler touches only the locked samples.
final class RSSSampler {
    private let queue = DispatchQueue(label: "darkroom.view.rss", qos: .utility)
    private let values = Locked<[Double]>([])
    /// Made by ``start()``: a dispatch source released before it was ever resumed traps, so none exists before.
    private var timer: (any DispatchSourceTimer)?

    /// Starts sampling: one sample now, then one a second.
    func start() {
        guard timer == nil else { return }
        let values = values
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .seconds(1))
        timer.setEventHandler { values.withLock { $0.append(Double(ProcessStats.currentRSSBytes) / 1_048_576) } }
        timer.resume()
        self.timer = timer
    }

    /// Stops sampling (the samples are kept).
    func stop() { timer?.cancel() }

    /// The samples so far, MiB.
    var samples: [Double] { values.withLock { $0 } }
}
