/// How important a log message is, from the most verbose to the most severe.
public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Every step, for following a flow in detail.
    case trace
    /// Details useful while debugging.
    case debug
    /// Normal events (signed in, refreshed, signed out). The default threshold.
    case info
    /// Something unexpected that was handled (a retry, a refetched key set).
    case warning
    /// An operation failed.
    case error
    /// The client cannot go on (corrupted storage, misconfiguration).
    case critical

    /// Orders levels by severity.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name in lower case (`"info"`).
    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// Parses a level name (`"trace"` ... `"critical"`, case-insensitive).
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = level
    }
}

/// One log message, already redacted.
public struct LogRecord: Sendable, Hashable {
    /// Its level.
    public var level: LogLevel
    /// The redacted message.
    public var message: String
    /// Where it comes from (`"session"`, `"oidc"`, ...).
    public var category: String
    /// The source file (`#fileID`), function and line of the call that logged it.
    public var file: String
    /// See `file`.
    public var function: String
    /// See `file`.
    public var line: UInt

    /// Creates a record.
    public init(level: LogLevel, message: String, category: String, file: String = "", function: String = "", line: UInt = 0) {
        self.level = level
        self.message = message
        self.category = category
        self.file = file
        self.function = function
        self.line = line
    }
}
