/// Where an application receives the auth client's log messages, shaped like swift-log's
/// `LogHandler.log(level:message:metadata:source:file:function:line:)`, so that bridging to
/// swift-log (or os_log-style loggers) takes a few lines:
///
/// ```swift
/// import Logging
///
/// struct SwiftLogBridge: AuthLogHandler {
///     let logger: Logger
///     func log(level: LogLevel, message: String, metadata: [String: String], source: String,
///              file: String, function: String, line: UInt) {
///         logger.log(level: Logger.Level(rawValue: level.description) ?? .info, "\(message)",
///                    metadata: metadata.mapValues { .string($0) }, source: source,
///                    file: file, function: function, line: line)
///     }
/// }
/// let client = try await OIDCClient(configuration: configuration, store: store,
///                                   logger: AuthLogger(level: .debug, handler: SwiftLogBridge(logger: Logger(label: "auth"))))
/// ```
///
/// Messages are redacted before they get here (no token, code, secret or password); the level
/// names are swift-log's (`trace`, `debug`, `info`, `warning`, `error`, `critical`).
public protocol AuthLogHandler: Sendable {
    /// Receives one redacted message. `metadata` has the message's `category` (`"session"`,
    /// `"oidc"`, ...); `source` is `"CredentialVaultAuth"`.
    func log(level: LogLevel, message: String, metadata: [String: String], source: String, file: String, function: String, line: UInt)
}
