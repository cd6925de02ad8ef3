import CredentialVaultCLI
import Foundation
import Logging

/// Where the auth commands log: one line per message on standard error,
/// `credvault-auth [level] category: message`. The auth client redacts each message and its
/// metadata before it gets here; here their control characters are escaped (`TerminalText`, as
/// in every other stderr line of credvault's), since a message carries a provider's text (its
/// error codes and descriptions), which could otherwise forge a line or send the terminal an
/// escape sequence.
struct StderrLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let category = TerminalText.escaped(event.metadata?["category"].map { "\($0)" } ?? event.source)
        let line = "credvault-auth [\(event.level.rawValue)] \(category): \(TerminalText.escaped(event.message.description))\n"
        // Not `FileHandle.write`, which traps when stderr is closed, full or a broken pipe.
        StandardOutput.writeError(Data(line.utf8))
    }

    /// The levels `--log-level` accepts (swift-log's, `notice` aside, as before it was swift-log's).
    private static let levels: [Logger.Level] = [.trace, .debug, .info, .warning, .error, .critical]

    /// The auth commands' logger: `--log-level NAME` (case-insensitive; default `warning`) to
    /// standard error.
    static func logger(levelOption name: String?) throws -> Logger {
        guard let level = levels.first(where: { $0.rawValue == (name ?? "warning").lowercased() }) else {
            throw UsageError("--log-level is trace, debug, info, warning, error or critical")
        }
        return Logger(label: "credvault", factory: { _ in StderrLogHandler(logLevel: level) })
    }
}
