import CredentialVault
import Logging

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
    /// The deadline of a wait for a person: `unlockInteractively()`, and the provider's prompts
    /// (dialogs) when `allowsInteraction` is set. The operation's own `timeout` starts again
    /// once the person answered. Default 2 minutes.
    public var interactiveUnlockTimeout: Duration
    /// Whether the Secret Service provider may ask a person in the middle of an operation: show
    /// its unlock dialog when the collection is locked, or KeePassXC's dialog confirming a
    /// program's access to an item. Default `false`: the operation then throws
    /// `interactionRequired` (or `locked`, for a collection locked before the operation began),
    /// never opening a dialog itself. Set it in a desktop application that has a person in front
    /// of it (as libsecret's password API always does); leave it off in services and scripts.
    ///
    /// Prompts that complete without a person are part of every operation either way: KeePassXC
    /// answers every item creation with one, and KWallet's collection is reported locked at each
    /// login until a client runs `Unlock` and its prompt (no dialog while the wallet is open).
    /// Each such wait ends at the operation's deadline; one that is still waiting then was
    /// waiting for a person: its prompt is dismissed and `interactionRequired` thrown.
    public var allowsInteraction: Bool
    /// The D-Bus bus to find the Secret Service on: `nil` (the default) for the session bus
    /// (`$DBUS_SESSION_BUS_ADDRESS`), else a D-Bus address such as `unix:path=/run/...`, for a
    /// provider on a bus of its own (a private test bus, a sandbox's). Stores of one process on
    /// the same bus share one connection.
    public var busAddress: String?
    /// Put in front of every service name in the keyring, so that this store sees (lists,
    /// deletes with `deleteAll`) only the credentials under it. Empty by default: the store then
    /// sees every item of the default collection that has `service` and `username` attributes,
    /// those of `secret-tool` and Python `keyring` included.
    public var serviceNamePrefix: String
    /// The source of "now" for ephemeral expiry (inject a `ManualClock` in tests).
    public var clock: any CredentialClock
    /// Where the store logs its decisions (default: nowhere). At `info`: the provider found when
    /// a connection is made, an unlock prompt shown and how it ended, an operation refused
    /// because the collection is locked or a person must answer; at `warning`: an operation
    /// past its deadline (`timedOut`); at `debug`: an operation run again after a provider's
    /// quirk (a stale alias, a session key it could not use, something unlocked meanwhile).
    /// Records have `category: secret-service`; never a secret, a service or account name, or
    /// an item's path.
    public var logger: Logger = .credentialVaultSilent
    /// Where the store counts timeouts and unlock prompts (trait `Metrics`).
    package var metrics = VaultMetrics()

    /// Creates a configuration; every parameter has the default described on its property.
    public init(
        application: ApplicationIdentifier = .credvault,
        defaultService: String? = nil,
        timeout: Duration = .seconds(5),
        interactiveUnlockTimeout: Duration = .seconds(120),
        serviceNamePrefix: String = "",
        clock: any CredentialClock = SystemClock(),
        allowsInteraction: Bool = false,
        busAddress: String? = nil
    ) {
        self.application = application
        explicitDefaultService = defaultService
        self.timeout = timeout
        self.interactiveUnlockTimeout = interactiveUnlockTimeout
        self.serviceNamePrefix = serviceNamePrefix
        self.clock = clock
        self.allowsInteraction = allowsInteraction
        self.busAddress = busAddress
    }
}
