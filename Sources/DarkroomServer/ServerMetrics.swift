import DarkroomCache
import DarkroomSupport
import DarkroomWorkers
import Metrics

/// The server's swift-metrics instruments (exported by `/metrics` when the process bootstrapped Prometheus):
///
/// - `darkroom_server_requests_total{route, status}` — responses by route and status;
/// - `darkroom_server_request_duration_seconds{route}` — time to answer, a histogram;
/// - `darkroom_server_thumbnails_total{outcome}` — `not_modified`, `memory`, `disk`, `rendered`, `joined`;
/// - `darkroom_server_render_queue` / `darkroom_server_renders_running` — admission state, sampled per request;
/// - `darkroom_server_decode_workers_total{event}` — the decode workers' `started`, `decodes`, `crashes`,
///   `timeouts`, `recycled` and `died_idle`, and `darkroom_server_decode_workers_running`, sampled per scrape.
///
/// Instruments are made once per label set and reused. Cost per request: a dictionary lookup under a lock.
final class ServerMetrics: Sendable {
    private struct ResponseKey: Hashable {
        let route: String
        let status: Int
    }
    private let responses = Locked<[ResponseKey: Counter]>([:])
    private let outcomes = Locked<[String: Counter]>([:])
    private let timers = Locked<[String: Metrics.Timer]>([:])
    private let queueGauge = Gauge(label: "darkroom_server_render_queue")
    private let runningGauge = Gauge(label: "darkroom_server_renders_running")
    private let workerEvents = Locked<[String: Counter]>([:])
    private let workersGauge = Gauge(label: "darkroom_server_decode_workers_running")
    /// The workers' counts at the last scrape: each scrape adds what changed since.
    private let workersSeen = Locked(DecodeWorkerPool.Statistics())

    func response(route: String, status: Int, seconds: Double) {
        let key = ResponseKey(route: route, status: status)
        let counter = responses.withLock { c in
            if let existing = c[key] { return existing }
            let made = Counter(
                label: "darkroom_server_requests_total", dimensions: [("route", route), ("status", String(status))])
            c[key] = made
            return made
        }
        counter.increment()
        timer(route).recordNanoseconds(Int64(seconds * 1e9))
    }

    func thumbnail(_ outcome: String) {
        let counter = outcomes.withLock { c in
            if let existing = c[outcome] { return existing }
            let made = Counter(label: "darkroom_server_thumbnails_total", dimensions: [("outcome", outcome)])
            c[outcome] = made
            return made
        }
        counter.increment()
    }

    func admission(running: Int, queued: Int) {
        runningGauge.record(running)
        queueGauge.record(queued)
    }

    /// Brings the decode workers' instruments up to `statistics` (the pool's counts so far).
    func decodeWorkers(_ statistics: DecodeWorkerPool.Statistics) {
        let events: [(String, KeyPath<DecodeWorkerPool.Statistics, Int>)] = [
            ("started", \.workersStarted), ("decodes", \.decodes), ("crashes", \.crashes), ("timeouts", \.timeouts),
            ("recycled", \.recycled), ("died_idle", \.diedIdle),
        ]
        let seen = workersSeen.withLock { seen in
            defer { seen = statistics }
            return seen
        }
        for (event, count) in events where statistics[keyPath: count] > seen[keyPath: count] {
            let counter = workerEvents.withLock { c in
                if let existing = c[event] { return existing }
                let made = Counter(label: "darkroom_server_decode_workers_total", dimensions: [("event", event)])
                c[event] = made
                return made
            }
            counter.increment(by: statistics[keyPath: count] - seen[keyPath: count])
        }
        workersGauge.record(statistics.workersRunning)
    }

    private func timer(_ route: String) -> Metrics.Timer {
        timers.withLock { t in
            if let existing = t[route] { return existing }
            let made = Metrics.Timer(
                label: "darkroom_server_request_duration_seconds", dimensions: [("route", route)],
                preferredDisplayUnit: .seconds)
            t[route] = made
            return made
        }
    }
}
