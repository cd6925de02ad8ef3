#if Configuration
import Configuration
import CredentialVault
import Logging
import Synchronization

/// A swift-configuration provider that reads credentials from any CredentialVault backend (the
/// sealed file, the Secret Service, the fleet store, systemd credentials, memory, or a
/// third-party store), so that a server reads its secrets the way it reads the rest of its
/// configuration:
///
/// ```swift
/// let store = try await SealedFileStore.open(at: url, secret: .keyFile(keyURL))
/// let vault = try await VaultConfigProvider(
///     store: store, mapping: try VaultConfigKeyMapping(service: "api.example.com", prefix: "config/"))
/// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), vault])
/// let password = config.string(forKey: "db.password", isSecret: true)  // config/db.password
/// ```
///
/// **Keys.** A configuration key names the credential `VaultConfigKeyMapping` says (one
/// service; the account is a prefix and the key's components joined with `"."`); a key the
/// mapping cannot represent is absent here, never another credential.
///
/// **Values.** Every value is secret (`ConfigValue.isSecret` is `true` whatever the reader
/// asked), so access reporters and descriptions show `<REDACTED>`. Values are read when the
/// provider is made and by `reload()`, into guarded memory (`SecureBytes`) held by the
/// snapshot; they are converted to the requested type (string, bytes, int, double, bool, and
/// arrays of them: see `SecretValueDecoding`) when read, and the `String` or `[UInt8]` a reader
/// gets is then the reader's copy. A value that is not UTF-8, asked for as text, throws
/// `CredentialVaultError.invalidArgument` (as does a number that does not parse); the message
/// never shows the value. Ephemeral credentials are never read.
///
/// **Access patterns.** `value(forKey:type:)` and `snapshot()` answer from the snapshot in
/// memory (no I/O, never blocking). `fetchValue(forKey:type:)` reloads first (as
/// `ReloadingFileProvider`'s does). `watchValue` and `watchSnapshot` emit the current value or
/// snapshot, then a new one after each reload that changed it (a value watcher hears only of
/// its key's changes, deletions included). Reloads happen when `reload()` is called or, with
/// `run(pollInterval:)` running in a task of the application's, at every interval.
///
/// **Failures.** A reload that fails (a locked or unreachable store, a damaged vault) throws
/// the store's `CredentialVaultError` to its caller, is logged at `warning` on `logger`, and
/// leaves the previous snapshot in use: a reader keeps the last values read. The log never
/// names a credential or shows a value.
///
/// Backends reach the provider through `AsyncTokenStorageAdapter`: every backend of this
/// package conforms; a backend with blocking operations only declares
/// `extension MyStore: AsyncTokenStorageAdapter {}` and its operations run on the library's
/// threads, never on the cooperative pool.
public final class VaultConfigProvider: Sendable {
    /// The name access reporters show: `VaultConfigProvider`, or `VaultConfigProvider[name]`.
    public let providerName: String
    /// How keys name credentials.
    public let mapping: VaultConfigKeyMapping

    let store: any AsyncTokenStorageAdapter
    let arraySeparator: Character
    let logger: Logger
    let state: Mutex<VaultConfigProviderState>

    /// Reads every value under `mapping` from `store` (the snapshot the provider starts with).
    ///
    /// - Parameters:
    ///   - store: Any backend, through its asynchronous protocol.
    ///   - mapping: How configuration keys name credentials.
    ///   - name: A name that tells this provider apart from others in access reports.
    ///   - arraySeparator: What separates the elements of a value read as an array (`","`).
    ///   - logger: Where failed reloads are reported (default: nowhere). Records never name a
    ///     credential or show a value.
    /// - Throws: The store's `CredentialVaultError` (`locked`, `notAvailable`, ...) when the
    ///   values cannot be read; `cancelled` when the task is cancelled meanwhile.
    public init(
        store: any AsyncTokenStorageAdapter, mapping: VaultConfigKeyMapping, name: String? = nil, arraySeparator: Character = ",",
        logger: Logger? = nil
    ) async throws(CredentialVaultError) {
        self.store = store
        self.mapping = mapping
        self.arraySeparator = arraySeparator
        self.providerName = "VaultConfigProvider" + (name.map { "[\($0)]" } ?? "")
        self.logger = logger ?? .credentialVaultSilent
        let values = try await VaultSnapshotReading.read(from: store, mapping: mapping, previous: [:])
        let snapshot = VaultConfigSnapshot(providerName: providerName, mapping: mapping, arraySeparator: arraySeparator, values: values)
        state = Mutex(VaultConfigProviderState(snapshot: snapshot))
    }

    /// The number of values in the current snapshot.
    public var count: Int { state.withLock { $0.snapshot.values.count } }

    func makeSnapshot(_ values: [[UInt8]: SecureBytes]) -> VaultConfigSnapshot {
        VaultConfigSnapshot(providerName: providerName, mapping: mapping, arraySeparator: arraySeparator, values: values)
    }
}

extension VaultConfigProvider: CustomStringConvertible, CustomDebugStringConvertible {
    /// The provider's name and number of values: never a value or a credential name.
    public var description: String { state.withLock { $0.snapshot.description } }
    /// As `description`.
    public var debugDescription: String { description }
}
#endif
