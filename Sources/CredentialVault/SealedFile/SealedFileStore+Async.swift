#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `AsyncTokenStorageAdapter` conformance: the same operations as the synchronous API, never blocking
/// the caller's thread.
///
/// - A read the state in memory can answer (the file's fingerprint unchanged, the state not
///   being written at that moment, no device key to derive) is answered on the caller's
///   thread: one `fstatat` and the record's decryption, as in the synchronous `load`.
/// - Anything else (catching up with a changed file, deriving the device key, purging) runs on
///   the store's own thread (`threads`), the caller suspended.
/// - A write waits for the vault lock by polling without blocking (`VaultLock.acquire` async;
///   cancellable), then runs the locked catch-up, change and durable write on the store's
///   thread. Cancelled while waiting for the lock or behind other work: `cancelled` at once,
///   nothing written. Cancelled once the write started: the write completes (a few
///   milliseconds), then its result is returned.
extension SealedFileStore: AsyncTokenStorageAdapter {
    /// See `save(_:for:options:)`.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try await write(saving(value, for: key, options: options))
    }

    /// See `load(_:)`; served from memory without a thread hop when the file has not changed.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        let cached = cached { (s) -> CacheAnswer? in
            guard let entry = s.contents.records[key] else { return .missing }
            if entry.isExpired(at: now) { return nil }  // purged on the store's thread
            if entry.accessibility == .deviceOnly && s.deviceKey == nil { return nil }  // derived there too
            return .found(entry, s.keys, s.contents.header.vaultID, s.deviceKey)
        }
        switch cached {
        case .missing: return nil
        case .found(let entry, let keys, let vaultID, let deviceKey):
            return try RecordCodec.openValue(entry.sealed, vaultID: vaultID, keys: keys) { () throws(CredentialVaultError) in
                guard let deviceKey else { throw .corrupted("device key missing") }
                return deviceKey
            }
        case nil:
            return try await onStoreThread { () throws(CredentialVaultError) in try self.synchronous.load(key) }
        }
    }

    /// See `take(_:)`.
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try Self.outcome(of: await write(taking(key)))
    }

    /// See `delete(_:)`.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        try await write(deleting(key))
    }

    /// See `listKeys(service:)`.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        if let keys = cached({ s in Self.keys(in: s, service: service) }) { return keys }
        return try await onStoreThread { () throws(CredentialVaultError) in try self.synchronous.listKeys(service: service) }
    }

    /// See `metadata(for:)`.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let now = configuration.clock.now()
        if let answer = cached({ s in Optional(Self.metadata(of: key, in: s, now: now)) }) { return answer }
        return try await onStoreThread { () throws(CredentialVaultError) in try self.synchronous.metadata(for: key) }
    }

    /// See `deleteAll(service:)`.
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        try await write(deletingAll(service: service))
    }

    // MARK: - Key management and opening, off the caller's thread

    /// `changeSecret(from:to:kdf:)`: the key derivations on the key-derivation threads
    /// (`StoreThreads.keyDerivation`), without the vault lock; then the write, as any other.
    /// Cancelled during the derivations: `cancelled` at once, nothing changed (the abandoned
    /// derivation ends on its own).
    public func changeSecret(from current: VaultSecret, to new: VaultSecret, kdf: KDFParameters = .moderate) async throws(CredentialVaultError) {
        let change = try await StoreThreads.keyDerivation.run(abandonable: true) { _ throws(CredentialVaultError) in
            try self.keyChange(from: current, to: new, kdf: kdf)
        }
        try await write(change)
    }

    /// `rotateDataKey(secret:kdf:)`, as the async `changeSecret`.
    public func rotateDataKey(secret key: VaultSecret, kdf: KDFParameters? = nil) async throws(CredentialVaultError) {
        let change = try await StoreThreads.keyDerivation.run(abandonable: true) { _ throws(CredentialVaultError) in
            try self.rotation(key: key, kdf: kdf)
        }
        try await write(change)
    }

    /// `changeCustody(to:secret:rollbackCounter:)` on the key-derivation threads (its derivation,
    /// the custodians' calls and the write; not abandoned once started: it writes).
    public func changeCustody(to custody: DeviceCustody, secret key: VaultSecret, rollbackCounter: Bool? = nil) async throws(CredentialVaultError) {
        try await StoreThreads.keyDerivation.run { _ throws(CredentialVaultError) in
            try self.changeCustody(to: custody, secret: key, rollbackCounter: rollbackCounter)
        }
    }

    /// `acceptRestore(at:secret:configuration:)` on the key-derivation threads (not abandoned once
    /// started: it writes).
    public static func acceptRestore(
        at url: URL, secret key: VaultSecret, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) async throws(CredentialVaultError) -> SealedFileStore {
        try await StoreThreads.keyDerivation.run { _ throws(CredentialVaultError) in
            try SealedFileStore.acceptRestore(at: url, secret: key, configuration: configuration)
        }
    }

    /// `open(at:secret:configuration:)` on the key-derivation threads (its derivation and read).
    /// Cancelled meanwhile: `cancelled` at once (the abandoned open has no effect but a
    /// best-effort purge of expired records, which any reader may do).
    public static func open(
        at url: URL, secret key: VaultSecret, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) async throws(CredentialVaultError) -> SealedFileStore {
        try await StoreThreads.keyDerivation.run(abandonable: true) { _ throws(CredentialVaultError) in
            try SealedFileStore.open(at: url, secret: key, configuration: configuration)
        }
    }

    /// `create(at:secret:kdf:configuration:)` on the key-derivation threads (not abandoned when
    /// cancelled once started: it writes the new vault).
    public static func create(
        at url: URL, secret key: VaultSecret, kdf: KDFParameters = .moderate, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) async throws(CredentialVaultError) -> SealedFileStore {
        try await StoreThreads.keyDerivation.run { _ throws(CredentialVaultError) in
            try SealedFileStore.create(at: url, secret: key, kdf: kdf, configuration: configuration)
        }
    }

    /// `openOrCreate(at:secret:kdf:configuration:)` on the key-derivation threads, as `create`.
    public static func openOrCreate(
        at url: URL, secret key: VaultSecret, kdf: KDFParameters = .moderate, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) async throws(CredentialVaultError) -> SealedFileStore {
        try await StoreThreads.keyDerivation.run { _ throws(CredentialVaultError) in
            try SealedFileStore.openOrCreate(at: url, secret: key, kdf: kdf, configuration: configuration)
        }
    }

    // MARK: - Helpers

    private enum CacheAnswer: Sendable {
        case missing
        case found(RecordEntry, VaultKeys, [UInt8], SecureBytes?)
    }

    /// `body`'s answer from the state in memory when that is current (the file's fingerprint is
    /// the one the state was read at) and not being changed right now; `nil` otherwise, or when
    /// `body` cannot answer from memory. Never waits: a state locked by a write is a miss.
    private func cached<R>(_ body: (State) -> R?) -> R? {
        let current = AtomicFile.fingerprint(location)
        guard let current else { return nil }
        return state.withLockIfAvailable { (s: inout State) -> R? in
            guard current == s.fingerprint else { return nil }
            return body(s)
        } ?? nil
    }

    /// The asynchronous write path: the vault lock (the one this task holds through
    /// `withExclusiveAccess`, or acquired by polling without blocking), then `mutate` on the
    /// store's thread.
    func write<R: Sendable>(_ change: VaultChange<R>) async throws(CredentialVaultError) -> R {
        try await withVaultLock { lock throws(CredentialVaultError) in
            try await threads.run { _ throws(CredentialVaultError) in try self.mutate(holding: lock, change.apply, changed: change.changed, returnsOnceDurable: change.returnsOnceDurable) }
        }
    }

    /// Runs a synchronous read of this store on its thread. A vault lock this task holds
    /// (`withExclusiveAccess`) goes with it, so that a purge there writes under it instead of
    /// finding the lock taken, by this very task, and giving up.
    private func onStoreThread<R: Sendable>(
        _ body: @escaping @Sendable () throws(CredentialVaultError) -> R
    ) async throws(CredentialVaultError) -> R {
        guard let held = VaultLock.enterHeld(lockID) else {
            return try await threads.run { _ throws(CredentialVaultError) in try body() }
        }
        defer { held.leave() }
        let lockID = self.lockID
        return try await threads.run { _ throws(CredentialVaultError) in
            var locks = VaultLock.held
            locks[lockID] = held
            let result = VaultLock.$held.withValue(locks) { () -> Result<R, CredentialVaultError> in
                do throws(CredentialVaultError) { return .success(try body()) } catch { return .failure(error) }
            }
            return try result.get()
        }
    }

    private func withVaultLock<R>(_ body: (VaultLock) async throws(CredentialVaultError) -> R) async throws(CredentialVaultError) -> R {
        if let held = VaultLock.enterHeld(lockID) {
            defer { held.leave() }
            return try await body(held)
        }
        let lock = try await VaultLock.acquire(location, timeout: configuration.lockTimeout, log: LockWaitLog(configuration, vault: location.path))
        defer { lock.release() }
        return try await body(lock)
    }
}
