import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where log messages go.
public enum LogDestination: Sendable {
    /// Standard error, one line per message (what `credvault` uses; not the library's default).
    case stderr
    /// The system log (`syslog(3)`, read with `journalctl`), under the given identifier.
    case syslog(identifier: String)
    /// Nowhere.
    case none
    /// A handler of the application's (it receives redacted records only).
    case custom(@Sendable (LogRecord) -> Void)
    /// An `AuthLogHandler` of the application's (a bridge to swift-log, ...).
    case handler(any AuthLogHandler)

    func write(_ record: LogRecord) {
        switch self {
        case .none:
            return
        case .stderr:
            let line = "credvault-auth [\(record.level)] \(record.category): \(record.message)\n"
            FileHandle.standardError.write(Data(line.utf8))
        case .syslog(let identifier):
            SyslogWriter.write(record, identifier: identifier)
        case .custom(let handler):
            handler(record)
        case .handler(let handler):
            handler.log(
                level: record.level, message: record.message, metadata: ["category": record.category], source: "CredentialVaultAuth",
                file: record.file, function: record.function, line: record.line)
        }
    }
}

/// Writes to syslog(3). `openlog` keeps the identifier pointer, so it is kept alive for the
/// life of the process.
enum SyslogWriter {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var openedIdentifier: UnsafeMutablePointer<CChar>?

    static func write(_ record: LogRecord, identifier: String) {
        lock.lock()
        defer { lock.unlock() }
        if openedIdentifier.map({ String(cString: $0) }) != identifier {
            let copy = strdup(identifier)
            openlog(copy, LOG_PID, LOG_USER)
            openedIdentifier = copy  // the previous copy is leaked on purpose: syslog may still use it
        }
        let priority: Int32 =
            switch record.level {
            case .trace, .debug: LOG_DEBUG
            case .info: LOG_INFO
            case .warning: LOG_WARNING
            case .error: LOG_ERR
            case .critical: LOG_CRIT
            }
        let message = "\(record.category): \(record.message)"
        message.withCString { text in withVaList([text]) { vsyslog(priority, "%s", $0) } }
    }
}
