#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A vault in one file, sealed with libsodium (XChaCha20-Poly1305 records, Argon2id or key file
/// or device key unlock), for servers and headless machines. See docs/FORMAT.md.
///
/// Persistent, cross-process safe (a lock file with a bounded wait; every write catches up with
/// the file under the lock), device-only records sealed a second time with the device key,
/// ephemeral records with TTL. Reads are served from memory and catch up only when the file
/// changed on disk (reading just what another process appended). Every write is atomic and
/// durable, and costs the same at any vault size: one journal entry appended and committed, the
/// whole file rewritten only once the journal outgrows its snapshot. A failed write
/// leaves the file and this object as they were.
public final class SealedFileStore: TokenStorageAdapter, ExclusiveAccessStore {
    struct State: Sendable {
        var keys: VaultKeys
        var contents: VaultContents
        var fingerprint: AtomicFile.Fingerprint?
        var deviceKey: SecureBytes?
        /// The rollback counter's guard (vaults that have one).
        var rollback: RollbackGuard?
        /// The next write rewrites the whole file even without a change (`acceptRestore`).
        var rewriteRequested = false
        /// Opened by `acceptRestore`, until its write: the counter is not checked.
        var acceptingRollback = false
        /// The custodian `changeCustody` is moving the vault to, while it writes the move (its
        /// new counter there is found from the vault id, and is no older copy's).
        var movingTo: DeviceCustody?
        /// The custodian's counter value, when a read under the vault lock checked it against
        /// the file just now (so that the write that follows does not read it again).
        var checkedCounter: UInt64?
    }

    /// The vault file.
    public let url: URL
    /// The vault file in its directory, opened and checked once: all file work goes through
    /// that descriptor (`FileLocation`), never through `url` again.
    let location: FileLocation
    /// `<vault>.lock` beside it.
    let lockLocation: FileLocation
    /// Names the lock whatever path reached the directory (device and inode of the directory),
    /// for `VaultLock.held`.
    let lockID: String
    let configuration: SealedFileConfiguration
    let state: Mutex<State>
    /// The header's key source and version as last read or written, readable without waiting
    /// for `state` (which a write holds through its `fdatasync`): `keySource`, `formatVersion`.
    let headerSummary: Mutex<HeaderSummary>
    /// The thread the async API runs this store's blocking work on (one: writes take the vault
    /// lock one at a time anyway), started on first use and ended when idle.
    let threads = StoreThreads(name: "credvault-file")

    /// The service used by the string conveniences.
    public var defaultService: String { configuration.defaultService }

    /// Persistent, device-only and portable, ephemeral, cross-process safe.
    public var capabilities: BackendCapabilities {
        BackendCapabilities(
            isPersistent: true, supportsDeviceOnly: true, supportsPortable: true, supportsEphemeral: true,
            isCrossProcessSafe: true)
    }

    /// `$XDG_DATA_HOME/credential-vault/default.cvault` (default `~/.local/share/...`): the
    /// vault of `credvault` (`ApplicationIdentifier.credvault`). An application's own is
    /// `ApplicationIdentifier.defaultVaultURL`.
    public static var defaultURL: URL { ApplicationIdentifier.credvault.defaultVaultURL }

    init(
        url: URL, location: FileLocation, keys: VaultKeys, contents: VaultContents, fingerprint: AtomicFile.Fingerprint?,
        configuration: SealedFileConfiguration, rollback: RollbackGuard? = nil, deviceKey: SecureBytes? = nil,
        acceptingRollback: Bool = false
    ) throws(CredentialVaultError) {
        var rollback = rollback
        if contents.header.hasRollbackCounter {
            if rollback == nil {
                rollback = try configuration.rollbackGuard(
                    custody: contents.header.custody, vaultID: contents.header.vaultID, need: { Self.hostSecretNeed(contents) })
            }
            if !acceptingRollback, let rollback { try rollback.verify(contents.journal.counter) }
        } else if !acceptingRollback, try configuration.isMarkedRollbackProtected(contents.header.vaultID) {
            // No counter to ask, but this machine recorded that the vault has one: a copy from
            // before it got one (the older, weaker protection) is never opened as the vault.
            throw .rolledBack(
                "this vault has a rollback counter, and this copy of it has none: it is from before the counter was added")
        }
        // The user's files (the mark, the counter file) say nothing here: they can be put back.
        // The custodian that holds the vault's counter now cannot.
        if !acceptingRollback { try configuration.refuseIfAnchoredElsewhere(contents.header) }
        self.url = url
        self.location = location
        lockLocation = VaultLock.lockFileLocation(of: location)
        lockID = "\(location.directory?.identity ?? "")/\(lockLocation.name)"
        self.configuration = configuration
        headerSummary = Mutex(Self.summary(of: contents.header))
        state = Mutex(
            State(
                keys: keys, contents: contents, fingerprint: fingerprint.map { Self.settled($0, journal: contents.journal) }, deviceKey: deviceKey,
                rollback: rollback, acceptingRollback: acceptingRollback))
        // Expired ephemeral records are purged on open. Best effort, and without waiting for
        // the lock (opening is a read): if the vault is locked, busy or read-only they stay on
        // disk, but they are never served.
        if !acceptingRollback, contents.records.values.contains(where: { $0.isExpired(at: configuration.clock.now()) }) {
            _ = try? mutate(waiting: false, { _ in false })
        }
    }

    /// What the header says that callers may ask without waiting for a write.
    struct HeaderSummary: Sendable {
        var keySource: KeySource
        var version: String
        var custody: DeviceCustody
        var rollbackCounter: Bool
    }

    static func summary(of header: VaultHeader) -> HeaderSummary {
        HeaderSummary(
            keySource: header.keySource, version: header.version, custody: header.custody,
            rollbackCounter: header.hasRollbackCounter)
    }

    /// Opens and unlocks an existing vault (see `LockedVault`).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func open(
        at url: URL, secret key: VaultSecret, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        try LockedVault(url: url).unlock(with: key, configuration: configuration)
    }

    /// Creates a new, empty vault (its directory 0700, the file 0600) with a random data key
    /// wrapped by `key`. Throws `alreadyExists` when a vault already exists there, also one
    /// that appeared while this one was being made: an existing file is never replaced.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func create(
        at url: URL, secret key: VaultSecret, kdf: KDFParameters = .moderate,
        configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        let directory = try PrivateDirectory.create(url.deletingLastPathComponent().path, owners: .notWritableByOthers)
        let location = FileLocation(url.lastPathComponent, in: directory)
        let lock = try VaultLock.acquire(location, timeout: configuration.lockTimeout, log: LockWaitLog(configuration, vault: location.path))
        defer { lock.release() }
        if try location.status() != nil {
            throw .alreadyExists("a vault at \(url.path): open it, or create the new one at another path")
        }
        AtomicFile.removeStaleTemporaries(of: location)  // of a create killed mid-write
        let dataKey = SecureBytes.random(count: Crypto.keyBytes)
        let vaultID = Crypto.randomBytes(VaultHeader.idSize)
        let header = try wrappedHeader(
            for: key, kdf: kdf, vaultID: vaultID, dataKey: dataKey, generation: 0, custody: configuration.custody,
            rollbackCounter: configuration.makesRollbackCounter, configuration: configuration, hostSecretNeed: { .none })
        let keys = VaultKeys(dataKey: dataKey)
        // The counter first: a vault file never exists without the counter it names.
        var rollback: RollbackGuard?
        var stamp = RollbackStamp()
        if header.hasRollbackCounter {
            let made = try configuration.rollbackGuard(custody: header.custody, vaultID: vaultID, need: { .none })
            let counter = try made.custodian.createCounter(vaultID: vaultID, binding: made.binding)
            stamp = RollbackStamp(reference: counter.reference, value: counter.value)
            rollback = made
            try configuration.markRollbackProtected(vaultID, true)  // a new id: nothing older to refuse
        }
        // A vault that appeared meanwhile keeps its name: what was made for this one goes.
        func discard() {
            guard let rollback else { return }
            try? rollback.custodian.removeCounter(vaultID: vaultID, reference: stamp.reference, binding: rollback.binding)
            try? configuration.markRollbackProtected(vaultID, false)
        }
        let (bytes, journal) = JournaledFile.serialize(header: header, records: RecordTable().values, macKey: keys.macKey, counter: stamp)
        let contents = VaultContents(header: header, records: RecordTable(), journal: journal)
        // Never replaces: a vault that appeared during the key derivation (a restore) stays.
        let created: Bool
        do throws(CredentialVaultError) {
            created = try AtomicFile.create(bytes, at: location)
        } catch {
            discard()
            throw error
        }
        guard created else {
            discard()
            throw .alreadyExists(
                "a vault at \(url.path) (it appeared while this one was being created; it was not replaced): open it, or create the new one at another path")
        }
        try directory.checkStillAtPath(after: "the creation of \(url.path)")
        return try SealedFileStore(
            url: url, location: location, keys: keys, contents: contents, fingerprint: AtomicFile.fingerprint(location),
            configuration: configuration, rollback: rollback)
    }

    /// Opens the vault at `url`, creating it first when there is none.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func openOrCreate(
        at url: URL, secret key: VaultSecret, kdf: KDFParameters = .moderate,
        configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        let locked: LockedVault
        do {
            locked = try LockedVault(url: url)
        } catch .notAvailable {
            do {
                return try create(at: url, secret: key, kdf: kdf, configuration: configuration)
            } catch .alreadyExists {
                // Another process created it in between: open theirs.
                return try open(at: url, secret: key, configuration: configuration)
            }
        }
        // Only a missing file means "create": an error of the unlock (a missing host secret
        // is `notAvailable` too) is the caller's to see.
        return try locked.unlock(with: key, configuration: configuration)
    }

    /// A header for `key` with fresh salt, wrapping `dataKey`: one key derivation.
    /// `hostSecretNeed` says what depends on the host secret, should a device key find none.
    static func wrappedHeader(
        for key: VaultSecret, kdf: KDFParameters, vaultID: [UInt8], dataKey: SecureBytes, generation: UInt64,
        custody: DeviceCustody, rollbackCounter: Bool, configuration: SealedFileConfiguration,
        hostSecretNeed: () -> HostSecret.Need = { .deviceKeyVault }
    ) throws(CredentialVaultError) -> VaultHeader {
        let isPassphrase = if case .passphrase = key { true } else { false }
        let source: KeySource =
            switch key {
            case .passphrase: .passphrase
            case .keyFile: .keyFile
            case .device: .device
            }
        var header = VaultHeader(
            vaultID: vaultID, keySource: source, kdf: isPassphrase ? .argon2id13 : .none,
            opsLimit: isPassphrase ? kdf.opsLimit : 0, memLimitBytes: isPassphrase ? kdf.memLimitBytes : 0,
            salt: Crypto.randomBytes(Crypto.saltBytes), wrappedKey: [], generation: generation, recordCount: 0,
            custody: custody, hasRollbackCounter: rollbackCounter)
        let kek = try KeyWrapping.keyEncryptionKey(
            key, header: header, configuration: configuration, hostSecretNeed: hostSecretNeed)
        header.wrappedKey = KeyWrapping.wrap(dataKey, kek: kek, header: header)
        return header
    }
}
