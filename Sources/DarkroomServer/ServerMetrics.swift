import Metrics
import Synchronization

/// The server's swift-metrics instruments (exported by `/metrics` when the process bootstrapped Prometheus):
///
/// - `darkroom_server_requests_total{route, status}` — responses by route and status;
/// - `darkroom_server_request_duration_seconds{route}` — time to answer, a histogram;
/// - `darkroom_server_thumbnails_total{outcome}` — `not_modified`, `memory`, `disk`, `rendered`, `joined`;
/// - `darkroom_server_render_queue` / `darkroom_server_renders_running` — admission state, sampled per request.
///
/// Instruments are made once per label set and reused. Cost per request: a dictionary lookup under a lock.
final class ServerMetrics: Sendable {
    private let counters = Mutex<[String: Counter]>([:])
    private let timers = Mutex<[String: Metrics.Timer]>([:])
    private let queueGauge = Gauge(label: "darkroom_server_render_queue")
    private let runningGauge = Gauge(label: "darkroom_server_renders_running")

    func response(route: String, status: Int, seconds: Double) {
        counter("darkroom_server_requests_total", [("route", route), ("status", String(status))]).increment()
        timer(route).recordNanoseconds(Int64(seconds * 1e9))
    }

    func thumbnail(_ outcome: String) {
        counter("darkroom_server_thumbnails_total", [("outcome", outcome)]).increment()
    }

    func admission(running: Int, queued: Int) {
        runningGauge.record(running)
        queueGauge.record(queued)
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        return counters.withLock { c in
            if let existing = c[key] { return existing }
            let made = Counter(label: label, dimensions: dimensions)
            c[key] = made
            return made
        }
    }

    private func timer(_ route: String) -> Metrics.Timer {
        timers.withLock { t in
            if let existing = t[route] { return existing }
            let made = Metrics.Timer(label: "darkroom_server_request_duration_seconds", dimensions: [("route", route)],
                                     preferredDisplayUnit: .seconds)
            t[route] = made
            return made
        }
    }
}
