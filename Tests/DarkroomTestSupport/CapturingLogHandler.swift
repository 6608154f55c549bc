import DarkroomSupport
import Logging

/// A swift-log handler that keeps every message, so a test can check what was logged (and how often).
package struct CapturingLogHandler: LogHandler {
    /// One logged message with its metadata rendered as text.
    package struct Entry: Sendable {
        package let level: Logger.Level
        package let message: String
        package let metadata: [String: String]
    }

    /// Where the messages go; share one between the handlers a `Logger` factory makes.
    package final class Store: Sendable {
        private let entries = Locked<[Entry]>([])
        package init() {}
        /// Every message so far, oldest first.
        package var all: [Entry] { entries.withLock { $0 } }
        fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    }

    private let store: Store
    package var logLevel: Logger.Level = .trace
    package var metadata: Logger.Metadata = [:]

    package init(_ store: Store) {
        self.store = store
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        store.append(
            Entry(
                level: event.level, message: event.message.description,
                metadata: merged.mapValues { "\($0)" }))
    }
}
