import CredentialVault

/// How a `SecretServiceStore` talks to the Secret Service.
public struct SecretServiceConfiguration: Sendable {
    /// The application whose namespace the store works in. An application's items carry the
    /// attribute `credential-vault:application` with its identifier and the store searches
    /// with it (lookups, `listKeys`, `deleteAll`), so applications sharing a keyring never see
    /// each other's credentials; it also names the default service.
    ///
    /// Default `.credvault`: unscoped items, the ones `credvault`, `secret-tool`, Python
    /// `keyring` and versions of this library before identifiers write; an unscoped store skips
    /// applications' items (it marks its own writes `credential-vault:application=credential-vault`,
    /// so that the daemon's replace never matches an application's item, searches for its marked
    /// items alongside each key's search, and reads the attributes of the unmarked ones it finds;
    /// scoped stores pay none of this: see `CredentialNaming.search`). An application passes its own
    /// identifier (as `BackendResolver(application:)` does). Credentials an application stored
    /// unscoped stay there: copy them once with `CredentialMigrator` (see `ApplicationIdentifier`).
    public var application: ApplicationIdentifier
    /// The service of the string conveniences `save(key:value:)`, `load(key:)` and `delete(key:)`:
    /// `application.defaultService` unless set (`"credential-vault"` for `.credvault`).
    public var defaultService: String {
        get { explicitDefaultService ?? application.defaultService }
        set { explicitDefaultService = newValue }
    }
    private var explicitDefaultService: String?
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
        application: ApplicationIdentifier = .credvault,
        defaultService: String? = nil,
        timeout: Duration = .seconds(5),
        interactiveUnlockTimeout: Duration = .seconds(120),
        serviceNamePrefix: String = "",
        clock: any CredentialClock = SystemClock()
    ) {
        self.application = application
        explicitDefaultService = defaultService
        self.timeout = timeout
        self.interactiveUnlockTimeout = interactiveUnlockTimeout
        self.serviceNamePrefix = serviceNamePrefix
        self.clock = clock
    }
}
