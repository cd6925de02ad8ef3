import Logging

extension Logger {
    /// The logger of every CredentialVault type the application gives none: it drops
    /// everything, so the libraries are silent unless the application passes a `Logger`.
    ///
    /// Not `Logger(label:)`: before `LoggingSystem.bootstrap` that one prints to standard error,
    /// which a library must not do unasked. Server libraries take a `Logger` and default to a
    /// no-op handler the same way (AsyncHTTPClient's "do not log" logger, for example).
    @usableFromInline
    package static let credentialVaultSilent = Logger(label: "CredentialVault", factory: { _ in SwiftLogNoOpLogHandler() })
}
