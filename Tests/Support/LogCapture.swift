import Logging
import Synchronization

/// What a `Logger` from `logger(level:)` received: a swift-log handler that keeps every record
/// (for tests of what the libraries log, and that no secret is in it).
public final class LogCapture: Sendable {
    /// One record, as the handler got it.
    public struct Entry: Sendable {
        /// Its level.
        public let level: Logger.Level
        /// The message.
        public let message: String
        /// Its metadata, each value as text.
        public let metadata: [String: String]
        /// The module that logged it.
        public let source: String
        /// The call site's file (`#fileID`) and line.
        public let file: String
        /// See `file`.
        public let line: UInt

        /// The message followed by its metadata, for searching everything a log line could show.
        public var text: String { ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ") }
    }

    private let kept = Mutex<[Entry]>([])

    /// Creates an empty capture.
    public init() {}

    /// A logger that sends `level` and above here.
    public func logger(level: Logger.Level = .trace, label: String = "test") -> Logger {
        Logger(label: label, factory: { _ in Handler(capture: self, logLevel: level) })
    }

    /// Every record so far, in order.
    public var entries: [Entry] { kept.withLock { $0 } }

    /// Every record's text, one per line.
    public var text: String { entries.map(\.text).joined(separator: "\n") }

    fileprivate func keep(_ entry: Entry) { kept.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.keep(
                Entry(
                    level: event.level, message: event.message.description, metadata: merged.mapValues { "\($0)" }, source: event.source,
                    file: event.file, line: event.line))
        }
    }
}
