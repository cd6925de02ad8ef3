import CredentialVault

/// How a `SecretServiceStore` talks to the Secret Service.
public struct SecretServiceConfiguration: Sendable {
    /// The service of the string conveniences `save(key:value:)`, `load(key:)` and `delete(key:)`.
    /// Default `"credential-vault"`.
    public var defaultService: String
    /// The deadline of each operation, all its D-Bus round trips included. Past it the operation
    /// is cancelled and throws `timedOut` (whether a write it sent took effect is then unknown).
    /// Default 5 seconds.
    public var timeout: Duration
    /// The deadline of `unlockInteractively()`, which waits for a person to type a password.
    /// Default 2 minutes.
    public var interactiveUnlockTimeout: Duration
    /// Put in front of every service name in the keyring, so that this store sees (lists,
    /// deletes with `deleteAll`) only the credentials under it. Empty by default: the store then
    /// sees every item of the default collection that has `service` and `username` attributes,
    /// those of `secret-tool` and Python `keyring` included.
    public var serviceNamePrefix: String
    /// The source of "now" for ephemeral expiry (inject a `ManualClock` in tests).
    public var clock: any CredentialClock

    /// Creates a configuration; every parameter has the default described on its property.
    public init(
        defaultService: String = "credential-vault",
        timeout: Duration = .seconds(5),
        interactiveUnlockTimeout: Duration = .seconds(120),
        serviceNamePrefix: String = "",
        clock: any CredentialClock = SystemClock()
    ) {
        self.defaultService = defaultService
        self.timeout = timeout
        self.interactiveUnlockTimeout = interactiveUnlockTimeout
        self.serviceNamePrefix = serviceNamePrefix
        self.clock = clock
    }
}
