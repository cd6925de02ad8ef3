/// The auth client's logger: a threshold level and a destination. Every message is passed
/// through `Redactor` before it reaches the destination, at every level (trace included).
///
/// **Silent by default**: a library should not write to a program's stderr unasked, so
/// `AuthLogger()` sends nothing anywhere. Choose a destination (`.stderr`, `.syslog`, or your
/// own `AuthLogHandler`, which bridges to swift-log in a few lines: docs/API.md, "Logging").
public struct AuthLogger: Sendable {
    /// Messages below this level are dropped (default `.info`).
    public var level: LogLevel
    /// Where messages go (default `.none`: nowhere).
    public var destination: LogDestination

    /// Creates a logger; with no arguments, a silent one.
    public init(level: LogLevel = .info, destination: LogDestination = .none) {
        self.level = level
        self.destination = destination
    }

    /// A logger that sends `level` and above to `handler`.
    public init(level: LogLevel = .info, handler: any AuthLogHandler) {
        self.init(level: level, destination: .handler(handler))
    }

    /// A logger that drops everything.
    public static let disabled = AuthLogger(level: .critical, destination: .none)

    /// Logs `message` (built only when the level passes) under `category`.
    public func log(
        _ level: LogLevel, _ category: String, _ message: @autoclosure () -> String,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard level >= self.level else { return }
        if case .none = destination { return }
        destination.write(
            LogRecord(level: level, message: Redactor.redact(message()), category: category, file: file, function: function, line: line))
    }

    /// Logs at `.trace`.
    public func trace(_ category: String, _ message: @autoclosure () -> String, file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(.trace, category, message(), file: file, function: function, line: line)
    }
    /// Logs at `.debug`.
    public func debug(_ category: String, _ message: @autoclosure () -> String, file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(.debug, category, message(), file: file, function: function, line: line)
    }
    /// Logs at `.info`.
    public func info(_ category: String, _ message: @autoclosure () -> String, file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(.info, category, message(), file: file, function: function, line: line)
    }
    /// Logs at `.warning`.
    public func warning(_ category: String, _ message: @autoclosure () -> String, file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(.warning, category, message(), file: file, function: function, line: line)
    }
    /// Logs at `.error`.
    public func error(_ category: String, _ message: @autoclosure () -> String, file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(.error, category, message(), file: file, function: function, line: line)
    }
    /// Logs at `.critical`.
    public func critical(_ category: String, _ message: @autoclosure () -> String, file: String = #fileID, function: String = #function, line: UInt = #line) {
        log(.critical, category, message(), file: file, function: function, line: line)
    }
}
