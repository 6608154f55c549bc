import Foundation
import Logging

/// A log handler for the server that writes one line per message to standard error and renders metadata only
/// when a message is actually logged.
///
/// swift-log's `StreamLogHandler` re-renders its whole metadata string whenever metadata changes, and Hummingbird
/// attaches a request id to a copy of the logger on every request — so with it, each request paid for formatting a
/// line that was never logged (~3 % of a cached hit). Here setting metadata is a dictionary store. Each message is
/// one `write(2)`, so lines from different threads never interleave. Thread-safe (a value type; no shared state).
package struct ServerLogHandler: LogHandler {
    /// The least severe level logged.
    package var logLevel: Logger.Level
    /// Metadata attached to every message of this logger.
    package var metadata: Logger.Metadata = [:]
    private let label: String

    /// Creates a handler for `label` at `level`.
    package init(label: String, level: Logger.Level = .info) {
        self.label = label
        logLevel = level
    }

    /// Reads or writes one metadata value.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `timestamp level label: key=value … [source] message`.
    package func log(event: LogEvent) {
        var all = metadata
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        let rendered =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = Date().formatted(.iso8601)
        let text = "\(time) \(event.level) \(label):\(rendered) [\(event.source)] \(event.message)\n"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
