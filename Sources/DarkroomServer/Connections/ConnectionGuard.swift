import DarkroomCache
import DarkroomSupport
import Foundation
import Logging
import Metrics
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Bounds the server's client connections so one client cannot take the descriptors everyone needs: at most
/// ``Limits/maxConnections`` open in all and ``Limits/maxPerClient`` from one address, and none kept waiting for
/// a request head longer than ``Limits/headTimeout``.
///
/// A new connection over the per-address limit is closed at once. At the total limit it takes the place of the
/// connection that has waited longest between requests (idle keep-alive, or a head still arriving); only when
/// every connection is in the middle of a request is it closed instead. So a flood of idle connections cannot
/// lock out `/health` or a cached hit: each new client pushes out the oldest idle one, as nginx does when it runs
/// out of connections. Every refusal, eviction and head timeout is counted (``counts``, and the
/// `darkroom_server_connections_*` metrics) and logged: the first at once, later ones summed into one line per
/// ``logInterval``.
///
/// Cost: one lock per connection event; an eviction scans the open connections (thousands at most). Thread-safe.
final class ConnectionGuard: Sendable {
    /// The limits in force.
    struct Limits: Sendable {
        /// Most connections open at once.
        var maxConnections: Int
        /// Most connections open at once from one client address; 0 for no per-address limit.
        var maxPerClient: Int
        /// Seconds a connection may take to send a complete request head after opening or after its previous
        /// response (an idle keep-alive connection and a slow sender alike); 0 for none.
        var headTimeout: Double
    }

    /// Why a connection was turned away or closed.
    enum Reason: String, Sendable, CaseIterable {
        /// Over ``Limits/maxPerClient``.
        case perClient = "per_client"
        /// Over ``Limits/maxConnections`` with every connection busy.
        case total
        /// Closed to make room for a new one (it was the longest idle).
        case evicted
        /// No complete request head within ``Limits/headTimeout``.
        case headTimeout = "head_timeout"
    }

    /// What ``open(_:)`` decided.
    enum Admission {
        /// Serve it; close `evict` (another connection) to make room.
        case accepted(ClientConnection, evict: (any Channel)?)
        case refused(Reason)
    }

    let limits: Limits

    private struct Entry {
        let connection: ClientConnection
        let channel: any Channel
        /// Chosen for eviction and closing: not chosen again.
        var evicting = false
    }
    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var perClient: [String: Int] = [:]
        var counts: [Reason: UInt64] = [:]
        var unlogged: [Reason: UInt64] = [:]
        var lastLog = -Double.infinity
        var lastClient = ""
        var flushScheduled = false
    }
    private let state = Locked(State())
    private let logger: Logger
    private let openGauge = Gauge(label: "darkroom_server_connections_open")
    private let counters: [Reason: Counter]

    /// Seconds between two log lines about refusals (the counts in between are summed). Default 10.
    let logInterval: Double

    init(limits: Limits, logger: Logger, logInterval: Double = 10) {
        self.limits = limits
        self.logger = logger
        self.logInterval = logInterval
        counters = Dictionary(
            uniqueKeysWithValues: Reason.allCases.map {
                ($0, Counter(label: "darkroom_server_connections_closed_total", dimensions: [("reason", $0.rawValue)]))
            })
    }

    /// `configured`, lowered to leave `reserve` descriptors of `descriptorLimit` free (at least 16 connections);
    /// `configured` when there is no limit.
    static func maxConnections(_ configured: Int, descriptorLimit: Int?, reserve: Int) -> Int {
        let configured = max(1, configured)
        guard let descriptorLimit else { return configured }
        return min(configured, max(16, descriptorLimit - max(0, reserve)))
    }

    /// The process's soft descriptor limit (`RLIMIT_NOFILE`); `nil` when unlimited or unknown.
    static func descriptorLimit() -> Int? {
        var limit = rlimit()
        // RLIM_INFINITY is all ones
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Connections open now, counting those chosen for eviction whose close has not completed yet (so, for a
    /// moment after an eviction, one more than ``Limits/maxConnections``).
    var openCount: Int { state.withLock { $0.entries.count } }

    /// Connections open now and not being closed to make room: never more than ``Limits/maxConnections``.
    var keptCount: Int { state.withLock { s in s.entries.values.count { !$0.evicting } } }

    /// Connections refused or closed so far, by reason.
    var counts: [Reason: UInt64] { state.withLock { $0.counts } }

    /// Admits or refuses a connection that just opened.
    func open(_ channel: any Channel) -> Admission {
        let address = channel.remoteAddress?.ipAddress ?? ""
        let (decision, open): (Admission, Int) = state.withLock { s in
            if limits.maxPerClient > 0, !address.isEmpty, s.perClient[address, default: 0] >= limits.maxPerClient {
                return (.refused(.perClient), s.entries.count)
            }
            var evict: (any Channel)?
            if s.entries.count >= limits.maxConnections {
                // The connection idle longest, among those not mid-request and not already being closed
                var oldest: (key: ObjectIdentifier, since: UInt64)?
                for (key, entry) in s.entries where !entry.evicting && !entry.connection.isBusy {
                    let since = entry.connection.idleSinceNanoseconds
                    if oldest.map({ since < $0.since }) ?? true { oldest = (key, since) }
                }
                guard let oldest else { return (.refused(.total), s.entries.count) }
                evict = s.entries[oldest.key]!.channel
                s.entries[oldest.key]!.evicting = true
            }
            let connection = ClientConnection(address: address)
            s.entries[ObjectIdentifier(channel)] = Entry(connection: connection, channel: channel)
            if !address.isEmpty { s.perClient[address, default: 0] += 1 }
            return (.accepted(connection, evict: evict), s.entries.count)
        }
        switch decision {
        case .refused(let reason): record(reason, address: address)
        case .accepted(_, let evict?): record(.evicted, address: evict.remoteAddress?.ipAddress ?? "")
        case .accepted: break
        }
        openGauge.record(open)
        return decision
    }

    /// The connection record for `channel`, while it is open.
    func connection(for channel: any Channel) -> ClientConnection? {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.connection }
    }

    /// No complete head within the head timeout; the caller closes the channel.
    func headTimedOut(_ channel: any Channel) {
        record(.headTimeout, address: channel.remoteAddress?.ipAddress ?? "")
    }

    /// The channel closed: forgets it and tells the requests still running for it.
    func closed(_ channel: any Channel) {
        let removed: (entry: Entry, open: Int)? = state.withLock { s in
            guard let entry = s.entries.removeValue(forKey: ObjectIdentifier(channel)) else { return nil }
            let address = entry.connection.address
            if !address.isEmpty {
                let left = s.perClient[address, default: 1] - 1
                s.perClient[address] = left > 0 ? left : nil
            }
            return (entry, s.entries.count)
        }
        guard let removed else { return }  // refused at open: never counted
        removed.entry.connection.markGone()
        openGauge.record(removed.open)
    }

    /// Counts `reason` and logs, at most once per ``logInterval``, how many of each happened since the last line;
    /// counts that arrive within the interval are logged when it ends (a timer), so a burst's tail is never lost.
    private func record(_ reason: Reason, address: String) {
        counters[reason]?.increment()
        let now = MonotonicClock.seconds()
        enum Next {
            case log([Reason: UInt64])
            case flush(after: Double)
            case nothing
        }
        let next: Next = state.withLock { s in
            s.counts[reason, default: 0] += 1
            s.unlogged[reason, default: 0] += 1
            s.lastClient = address
            if now - s.lastLog >= logInterval {
                s.lastLog = now
                defer { s.unlogged = [:] }
                return .log(s.unlogged)
            }
            guard !s.flushScheduled else { return .nothing }
            s.flushScheduled = true
            return .flush(after: s.lastLog + logInterval - now)
        }
        switch next {
        case .log(let report): log(report, lastClient: address)
        case .flush(let seconds):
            // A Dispatch timer, not a task on the shared pool: refusals come in bursts exactly when that pool is
            // busiest, and the summary must not wait for it.
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + max(0, seconds)) { [self] in flush() }
        case .nothing: break
        }
    }

    /// Logs what was counted since the last line.
    private func flush() {
        let now = MonotonicClock.seconds()
        let (report, client): ([Reason: UInt64], String) = state.withLock { s in
            s.flushScheduled = false
            guard !s.unlogged.isEmpty else { return ([:], "") }
            s.lastLog = now
            defer { s.unlogged = [:] }
            return (s.unlogged, s.lastClient)
        }
        if !report.isEmpty { log(report, lastClient: client) }
    }

    private func log(_ report: [Reason: UInt64], lastClient: String) {
        var metadata: Logger.Metadata = [
            "open": "\(openCount)", "max": "\(limits.maxConnections)", "max_per_client": "\(limits.maxPerClient)",
            "last_client": "\(lastClient)",
        ]
        for (reason, count) in report { metadata[reason.rawValue] = "\(count)" }
        logger.warning("connections refused or closed by the connection limits", metadata: metadata)
    }
}
