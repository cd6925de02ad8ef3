#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Settings of a sealed-file vault that are not stored in the file.
public struct SealedFileConfiguration: Sendable {
    /// This machine's identity for device-only records and device-key unlock; `nil` means
    /// `DeviceIdentity.current()`, resolved on first use. Inject another one to play "another machine".
    public var device: DeviceIdentity?
    /// Decides ephemeral expiry.
    public var clock: any CredentialClock
    /// How long a write waits for another process's lock before throwing `busy`.
    public var lockTimeout: Duration
    /// The application whose vault this is; it names the default service. The vault's path
    /// is chosen apart (`application.defaultVaultURL`, or any path): a file opened at an
    /// explicit path is its own namespace already, hence the default `.credvault` here, where
    /// `SecretServiceConfiguration` (one keyring shared by every application) needs more care.
    public var application: ApplicationIdentifier
    /// The service used by the string conveniences: `application.defaultService` unless set.
    public var defaultService: String {
        get { explicitDefaultService ?? application.defaultService }
        set { explicitDefaultService = newValue }
    }
    private var explicitDefaultService: String?
    /// Who keeps the device secret and the rollback counter of vaults this configuration
    /// creates (default `.file`, the host-secret file). An existing vault keeps its own, which
    /// its header records; `changeCustody` moves it.
    public var custody: DeviceCustody = .file
    /// The keyring and TPM custodians this application can use (`KeyringCustodian` in
    /// CredentialVaultSecretService, `TPMCustodian` in CredentialVaultTPM); the host-secret
    /// file's is always there. A vault whose custodian is not here is `notAvailable`.
    public var custodians: [any DeviceCustodian] = []
    /// Whether new vaults get a rollback counter; `nil` (default): with keyring and TPM custody
    /// yes, with the host-secret file no (its counter is opt-in: a file-custody vault copied to
    /// another machine would need `acceptRestore` there; see docs/THREAT-MODEL.md, *Key custody and rollback*).
    public var rollbackCounter: Bool?
    /// Where the vault logs its decisions (default: nowhere). At `info`: waits for another
    /// process's lock beyond 1 s, custody moves, restores accepted; at `warning`: tampering,
    /// damage or an older copy detected, and a write that gave up waiting for the lock
    /// (`busy`); at `debug`: an unlock that read the file again after a race. A record names
    /// the vault file (`vault` metadata) and never a credential: no value, no service or
    /// account name (names are sealed in the file like the values: docs/API.md, "Logging").
    public var logger: Logger = .credentialVaultSilent
    /// How long a wait for another process's lock goes unreported: a wait that passes it is
    /// logged (at `info`) when it passes and when it ends. 1 s by default; tests set zero.
    package var lockWaitLogThreshold: Duration = .seconds(1)
    /// Where the vault counts lock waits, lock timeouts, tampering and rollback refusals
    /// (trait `Metrics`: the bootstrapped `MetricsSystem`; tests give a factory of their own).
    package var metrics = VaultMetrics()
    /// Called before each passphrase derivation (Argon2id) with the calling thread: a seam for
    /// tests that hold a derivation on a latch to show what does not wait for it.
    package var beforePassphraseDerivation: @Sendable () -> Void = {}

    /// Creates a configuration (defaults: this machine, the system clock, a 10 s lock wait, the
    /// `credvault` namespace, its application's default service).
    public init(
        device: DeviceIdentity? = nil, clock: any CredentialClock = SystemClock(), lockTimeout: Duration = .seconds(10),
        application: ApplicationIdentifier = .credvault, defaultService: String? = nil
    ) {
        self.device = device
        self.clock = clock
        self.lockTimeout = lockTimeout
        self.application = application
        explicitDefaultService = defaultService
    }

    func resolvedDevice() throws(CredentialVaultError) -> DeviceIdentity {
        if let device { return device }
        return try DeviceIdentity.current()
    }
}
