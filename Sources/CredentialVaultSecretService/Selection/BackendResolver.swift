import CredentialVault
import Foundation
import Logging

/// Chooses and opens a backend for one application: the Secret Service when it is reachable,
/// else the sealed file unlocked with this machine's device key (zero configuration), unless
/// the program or `CREDVAULT_BACKEND` says otherwise. Never a plaintext store: there is none.
///
/// **One namespace.** Every backend it opens works in `application`'s namespace (see
/// `ApplicationIdentifier`): the Secret Service items carry its identifier, the sealed file is
/// `application.defaultVaultURL`, and the string conveniences use `application.defaultService`
/// on all three, so `save(key:value:)` lands under the same service whichever backend is picked.
/// The configurations can still be given (a timeout, a clock, another vault path, another
/// default service); their `application` is always the resolver's.
///
/// **Locked is not unavailable.** The automatic choice asks the Secret Service for its state,
/// within `secretService.timeout` (at once when there is no session bus or no provider), and
/// never prompts. It falls back to the sealed file only when there is no Secret Service (no
/// bus, no provider). A provider that is there but does not answer in time, or answers without
/// a default collection (KWallet at the first login), is reported (`decide` and `open` throw:
/// the keyring may hold the app's credentials, or will), and a locked default collection is
/// handled by `lockedKeyring`: reported by default (`open` throws `locked`); `.useSealedFile`
/// opts into the file in all three cases.
///
/// Apps that stored credentials before identifiers existed find them in the `credvault`
/// namespace: copy them with `CredentialMigrator` (see `ApplicationIdentifier`).
public struct BackendResolver: Sendable {
    /// The application whose namespace every backend opened here uses.
    public let application: ApplicationIdentifier
    /// The environment consulted for `CREDVAULT_BACKEND` (the process's by default).
    public var environment: [String: String]
    /// How to reach the Secret Service (its `application` is always the resolver's).
    public var secretService: SecretServiceConfiguration {
        didSet { secretService.application = application }
    }
    /// The sealed-file vault to open (or create) with the device key.
    public var sealedFileURL: URL
    /// The sealed file's configuration (device identity, clock, lock wait; its `application`
    /// is always the resolver's).
    public var sealedFile: SealedFileConfiguration {
        didSet { sealedFile.application = application }
    }
    /// What the automatic choice does with a locked keyring (default `.reportLocked`).
    public var lockedKeyring: LockedKeyringPolicy
    /// How often a wait for unlock asks the keyring's state (default 500 ms). Each question is
    /// one D-Bus round trip, bounded by `secretService.timeout`.
    public var unlockPollInterval: Duration = .milliseconds(500)
    /// Whether `.automatic` picks the credentials systemd passed to this service, read-only
    /// (`SystemdCredentialStore`), when `$CREDENTIALS_DIRECTORY` is set in `environment`
    /// (default `false`: a service asks for it). `CREDVAULT_BACKEND` still overrides it.
    public var prefersSystemdCredentials = false
    /// Credential names mapped to keys of their own (`SystemdCredentialNaming.names`); every
    /// other credential is `defaultService`/NAME.
    public var systemdCredentialNames: [String: CredentialKey] = [:]
    /// Where the resolver logs its choice and why (`info`: the backend and the reason, a
    /// fallback to the sealed file included; a keyring that cannot be used and is reported
    /// instead), and, unless `sealedFile.logger` is set, where the sealed file it opens logs.
    /// Default: nowhere.
    public var logger: Logger = .credentialVaultSilent
    /// The Flatpak or Snap sandbox this process runs in (`Sandbox.detect` with `environment`),
    /// `nil` outside one. Inside one, `.automatic` never asks the Secret Service: it picks the
    /// sealed file under portal custody (`BackendResolver+Sandbox.swift`).
    public var sandbox: Sandbox?
    /// The Secret portal a vault under portal custody asks (deadlines: `SecretPortal`'s), and
    /// the one whose secret keys libsecret's file inside a sandbox.
    public var portal: SecretPortal
    /// Whether `.automatic` inside a sandbox picks libsecret's keyring file (`.libsecretFile`,
    /// keyed by the portal's secret) instead of the sealed file under portal custody (default
    /// `false`): for an app whose GTK or Rust components, or whose libsecret past, keep their
    /// secrets there. `CREDVAULT_BACKEND=libsecret-file` does the same. Outside a sandbox it
    /// changes nothing (there libsecret itself uses the Secret Service).
    public var prefersLibsecretFileInSandbox = false
    /// libsecret's keyring file for `.libsecretFile`; `nil`: where libsecret looks,
    /// `$SECRET_FILE_TEST_PATH` of `environment` when set and not empty, else
    /// `$XDG_DATA_HOME/keyrings/default.keyring` (in a Flatpak `~/.var/app/APPID/data/...`).
    public var libsecretFilePath: String?
    /// The password libsecret's keyring file is keyed with (as libsecret's
    /// `SECRET_FILE_TEST_PASSWORD`, which this library does not read from the environment):
    /// when set it is used inside a sandbox too, as libsecret does; outside a sandbox
    /// `.libsecretFile` needs it (there is no portal secret to use). Never logged.
    public var libsecretFilePassword: SecureBytes?

    /// Creates a resolver for `application` (required: it is the namespace). The defaults are
    /// the process environment, Secret Service and sealed-file configurations of that
    /// application, its default vault (`application.defaultVaultURL`), and `.reportLocked`.
    public init(
        application: ApplicationIdentifier,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        secretService: SecretServiceConfiguration? = nil,
        sealedFileURL: URL? = nil,
        sealedFile: SealedFileConfiguration? = nil,
        lockedKeyring: LockedKeyringPolicy = .reportLocked
    ) {
        self.application = application
        self.environment = environment
        // Observers do not run in an initialiser: the application is set here as well.
        self.secretService = secretService ?? SecretServiceConfiguration(application: application)
        self.secretService.application = application
        self.sealedFileURL = sealedFileURL ?? application.defaultVaultURL
        self.sealedFile = sealedFile ?? SealedFileConfiguration(application: application)
        self.sealedFile.application = application
        self.lockedKeyring = lockedKeyring
        let sandbox = Sandbox.detect(environment: environment)
        self.sandbox = sandbox
        portal = SecretPortal(sandbox: sandbox)
    }

    /// Decides which backend `choice` means here, without opening it. An explicit choice is
    /// taken as it is (`.libsecretFile` throws `notAvailable` outside a sandbox without
    /// `libsecretFilePassword`); `.automatic` follows `CREDVAULT_BACKEND` when set (throws
    /// `invalidArgument` for an unknown name), else asks the Secret Service: unlocked gives
    /// `.secretService`, unavailable gives `.file`, locked follows `lockedKeyring` (a
    /// `.secretService` decision with `isKeyringLocked`, or `.file`). With
    /// `.waitForUnlock(timeout:)` this blocks the calling thread while it waits: use the async
    /// `decide` where that matters.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func decide(_ choice: BackendChoice = .automatic) throws(CredentialVaultError) -> BackendDecision {
        if let decided = try decideWithoutAsking(choice) { return logged(decided) }
        if let decided = sandboxDecision() { return logged(decided) }
        let wait = waitPolicy()
        var probe = probeStatus()
        if let wait, probe.isLocked { probe = wait.run(after: probe, probe: probeStatus) }
        return try automatic(probe)
    }

    /// Decides (see `decide`) and opens the store: the Secret Service store, the sealed file
    /// opened (or created) with the device key, a new in-memory store, systemd's credentials, or
    /// libsecret's keyring file (the portal asked for its secret now), all in `application`'s
    /// namespace. Throws `locked` when the automatic choice found the keyring
    /// locked and `lockedKeyring` does not fall back (`BackendDecision.isKeyringLocked`).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func open(_ choice: BackendChoice = .automatic) throws(CredentialVaultError) -> BackendSelection {
        let decision = try decide(choice)
        if decision.isKeyringLocked { throw .locked }
        let store: any TokenStorageBackend
        switch decision.kind {
        case .secretService: store = SecretServiceStore(configuration: secretServiceConfiguration)
        case .file:
            store = try SealedFileStore.openOrCreate(at: sealedFileURL, secret: .device, configuration: sealedFileConfiguration(for: decision))
        case .memory: store = memoryStore()
        case .systemdCredentials: store = try systemdCredentialStore()
        case .libsecretFile: store = try libsecretFileStore(for: decision)
        }
        return BackendSelection(decision: decision, store: store)
    }

    /// Asks the Secret Service to unlock its default collection (a password prompt on the
    /// user's display; see `SecretServiceStore.unlockInteractively()`). Call it after a
    /// decision with `isKeyringLocked`, when a person is there, then `open` again.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func unlockInteractively() throws(CredentialVaultError) {
        try SecretServiceStore(configuration: secretService).unlockInteractively()
    }

    /// Waits until the Secret Service's default collection is unlocked (by the user, another
    /// program, a login) and returns its state, asking every `unlockPollInterval`. Throws
    /// `locked` when `timeout` passes first, and what `SecretServiceStore.status()` throws when
    /// the service is or becomes unavailable. Blocks the calling thread: see the async one.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func waitForUnlock(timeout: Duration) throws(CredentialVaultError) -> SecretServiceStatus {
        let wait = UnlockWait(timeout: timeout, interval: unlockPollInterval)
        return try wait.run(after: probeStatus(), probe: probeStatus).unlockedStatus()
    }

    // MARK: - Shared by the sync and async paths

    /// The decision when the Secret Service need not be asked (an explicit choice, or
    /// `CREDVAULT_BACKEND`); `nil` when it must be.
    func decideWithoutAsking(_ choice: BackendChoice) throws(CredentialVaultError) -> BackendDecision? {
        switch choice {
        case .secretService: return BackendDecision(kind: .secretService, reason: "chosen explicitly")
        case .file: return BackendDecision(kind: .file, reason: "chosen explicitly")
        case .memory: return BackendDecision(kind: .memory, reason: "chosen explicitly")
        case .systemdCredentials: return BackendDecision(kind: .systemdCredentials, reason: "chosen explicitly")
        case .libsecretFile: return try libsecretFileDecision(reason: "chosen explicitly")
        case .automatic: break
        }
        let variable = BackendChoice.environmentVariable
        guard let name = environment[variable], !name.isEmpty else { return systemdDecision() }
        guard let overridden = BackendChoice(name: name) else {
            throw .invalidArgument("\(variable) must be auto, secret-service, file, memory, systemd-credentials or libsecret-file")
        }
        if overridden == .automatic { return systemdDecision() }
        var decision = try decideWithoutAsking(overridden)
        decision?.reason = "\(variable)=\(name)"
        return decision
    }

    /// The automatic decision for systemd's credentials: when the app prefers them and
    /// `$CREDENTIALS_DIRECTORY` is set; else `nil` (the Secret Service is asked).
    func systemdDecision() -> BackendDecision? {
        let variable = SystemdCredentialStore.environmentVariable
        guard prefersSystemdCredentials, let path = environment[variable], !path.isEmpty else { return nil }
        return BackendDecision(kind: .systemdCredentials, reason: "\(variable) is set: the credentials systemd passed to this service, read-only")
    }

    /// The read-only store over `$CREDENTIALS_DIRECTORY` of `environment`, named with the
    /// resolver's `defaultService` and `systemdCredentialNames`. Throws `notAvailable` when the
    /// variable is not set (never another backend instead).
    func systemdCredentialStore() throws(CredentialVaultError) -> SystemdCredentialStore {
        let naming = SystemdCredentialNaming(service: defaultService, names: systemdCredentialNames)
        guard let store = try SystemdCredentialStore.fromEnvironment(environment, naming: naming) else {
            throw .notAvailable("\(SystemdCredentialStore.environmentVariable) is not set: this process was not started by systemd with credentials")
        }
        return store
    }

    /// The Secret Service's state, asked now (blocking, within `secretService.timeout`).
    func probeStatus() -> KeyringProbe {
        KeyringProbe { () throws(CredentialVaultError) in try SecretServiceStore(configuration: secretService).probe() }
    }

    /// The wait of `.waitForUnlock`, started now (before the first question); `nil` otherwise.
    func waitPolicy() -> UnlockWait? {
        guard case .waitForUnlock(let timeout) = lockedKeyring else { return nil }
        return UnlockWait(timeout: timeout, interval: unlockPollInterval)
    }

    /// The automatic decision for what the Secret Service answered. A keyring that is there but
    /// gave no answer (`unresponsive`: timed out, ...) throws that error unless the caller asked
    /// for the sealed file whenever the keyring cannot be used now (`.useSealedFile`): like a
    /// locked one, it may hold the credentials.
    func automatic(_ probe: KeyringProbe) throws(CredentialVaultError) -> BackendDecision {
        do throws(CredentialVaultError) {
            return logged(try decision(for: probe))
        } catch {
            logger.info(
                "no backend chosen: the Secret Service is there but cannot be used now (\(error)); reported, not replaced by the sealed file",
                metadata: ["category": "resolver"])
            throw error
        }
    }

    /// Logs `decision` with its reason, and returns it.
    func logged(_ decision: BackendDecision) -> BackendDecision {
        logger.info("backend chosen: \(decision)", metadata: ["category": "resolver"])
        return decision
    }

    /// `automatic`, without logging.
    private func decision(for probe: KeyringProbe) throws(CredentialVaultError) -> BackendDecision {
        let fallback = "using the sealed file \(sealedFileURL.path) with the device key"
        switch probe {
        case .unlocked(let status):
            return BackendDecision(
                kind: .secretService,
                reason: "the Secret Service is reachable and its \(status.collectionLabel) collection is unlocked",
                secretServiceStatus: status)
        case .locked(let status) where lockedKeyring == .useSealedFile:
            return BackendDecision(
                kind: .file, reason: "the Secret Service's \(status.collectionLabel) collection is locked: \(fallback) (as asked)",
                secretServiceStatus: status)
        case .locked(let status):
            return BackendDecision(
                kind: .secretService,
                reason: "the Secret Service's \(status.collectionLabel) collection is locked: unlock it, or choose the sealed file explicitly",
                secretServiceStatus: status)
        case .unavailable(let error):
            return BackendDecision(kind: .file, reason: "the Secret Service is not available (\(error)): \(fallback)")
        case .withoutCollection(let error) where lockedKeyring == .useSealedFile:
            return BackendDecision(kind: .file, reason: "\(error): \(fallback) (as asked)")
        case .withoutCollection(let error):
            throw error
        case .unresponsive(let error) where lockedKeyring == .useSealedFile:
            return BackendDecision(kind: .file, reason: "the Secret Service did not answer (\(error)): \(fallback) (as asked)")
        case .unresponsive(let error):
            throw error
        }
    }

    /// The service of the string conveniences on every backend this resolver opens: one that
    /// either configuration sets explicitly (the Secret Service's first), else the
    /// application's. One value for all three, so that `save(key:)` lands under the same
    /// service whichever backend is chosen.
    public var defaultService: String {
        if secretService.defaultService != application.defaultService { return secretService.defaultService }
        return sealedFile.defaultService
    }

    /// `secretService` with the resolver's `defaultService`.
    var secretServiceConfiguration: SecretServiceConfiguration {
        var configuration = secretService
        configuration.defaultService = defaultService
        return configuration
    }

    /// `sealedFile` with the resolver's `defaultService`, and its `logger` unless it has one.
    var sealedFileConfiguration: SealedFileConfiguration {
        var configuration = sealedFile
        configuration.defaultService = defaultService
        if configuration.logger.handler is SwiftLogNoOpLogHandler { configuration.logger = logger }
        return configuration
    }

    /// A new in-memory store with the resolver's default service.
    func memoryStore() -> InMemoryStore {
        InMemoryStore(application: application, defaultService: defaultService, clock: secretService.clock)
    }
}
