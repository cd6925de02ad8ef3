/// The auth client's logger: a threshold level and a destination. Every message is passed
/// through `Redactor` before it reaches the destination, at every level (trace included).
public struct AuthLogger: Sendable {
    /// Messages below this level are dropped (default `.info`).
    public var level: LogLevel
    /// Where messages go (default `.stderr`).
    public var destination: LogDestination

    /// Creates a logger.
    public init(level: LogLevel = .info, destination: LogDestination = .stderr) {
        self.level = level
        self.destination = destination
    }

    /// A logger that drops everything.
    public static let disabled = AuthLogger(level: .critical, destination: .none)

    /// Logs `message` (built only when the level passes) under `category`.
    public func log(_ level: LogLevel, _ category: String, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        if case .none = destination { return }
        destination.write(LogRecord(level: level, message: Redactor.redact(message()), category: category))
    }

    /// Logs at `.trace`.
    public func trace(_ category: String, _ message: @autoclosure () -> String) { log(.trace, category, message()) }
    /// Logs at `.debug`.
    public func debug(_ category: String, _ message: @autoclosure () -> String) { log(.debug, category, message()) }
    /// Logs at `.info`.
    public func info(_ category: String, _ message: @autoclosure () -> String) { log(.info, category, message()) }
    /// Logs at `.warning`.
    public func warning(_ category: String, _ message: @autoclosure () -> String) { log(.warning, category, message()) }
    /// Logs at `.error`.
    public func error(_ category: String, _ message: @autoclosure () -> String) { log(.error, category, message()) }
    /// Logs at `.critical`.
    public func critical(_ category: String, _ message: @autoclosure () -> String) { log(.critical, category, message()) }
}
