#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Key management and cross-process exclusive access.
extension SealedFileStore {
    /// How the vault is unlocked, as last read or written by this store (never waits for a write).
    public var keySource: KeySource { headerSummary.withLock { $0.keySource } }

    /// The vault's format version, for example `"1.0"`, as last read or written by this store.
    public var formatVersion: String { headerSummary.withLock { $0.version } }

    /// Replaces the key that unlocks the vault (a passphrase change, or a switch between
    /// passphrase, key file and device key): the data key is re-wrapped, the records are not
    /// touched. `current` must unlock the vault (it is checked first). Atomic: after a crash the
    /// vault opens with the old key or the new one.
    ///
    /// The two key derivations (up to seconds each with Argon2id) run before the vault lock and
    /// the store's state are taken, so that reads in this process and writes in others go on
    /// meanwhile; the write then only installs the new header, provided the vault is still
    /// wrapped as when the derivations started (else they are made again under the lock).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func changeSecret(from current: VaultSecret, to new: VaultSecret, kdf: KDFParameters = .moderate) throws(CredentialVaultError) {
        try write(keyChange(from: current, to: new, kdf: kdf))
    }

    /// Makes a new random data key and re-seals every record with it (for example after a
    /// key may have leaked). `key` must unlock the vault and wraps the new data key. Device-only
    /// values keep their inner device seal, so rotation works even on another machine.
    ///
    /// As for `changeSecret`, the key derivations run before the lock is taken.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func rotateDataKey(secret key: VaultSecret, kdf: KDFParameters? = nil) throws(CredentialVaultError) {
        try write(rotation(key: key, kdf: kdf))
    }

    /// A key change with its derivations made now (against the current state): the write that
    /// installs it, shared by the sync and async APIs.
    func keyChange(from current: VaultSecret, to new: VaultSecret, kdf: KDFParameters) throws(CredentialVaultError) -> VaultChange<Void> {
        let prepare = { @Sendable (s: State) throws(CredentialVaultError) -> VaultHeader in
            try self.verify(current, in: s)
            let need = Self.hostSecretNeed(s.contents)
            return try Self.wrappedHeader(
                for: new, kdf: kdf, vaultID: s.contents.header.vaultID, dataKey: s.keys.dataKey,
                generation: s.contents.header.generation, custody: s.contents.header.custody,
                rollbackCounter: s.contents.header.hasRollbackCounter, configuration: self.configuration, hostSecretNeed: { need })
        }
        let known = try read { $0 }
        let prepared = try prepare(known)
        return VaultChange { (s) throws(CredentialVaultError) in
            var header = Self.sameWrapping(s, as: known) ? prepared : try prepare(s)
            header.generation = s.contents.header.generation
            s.contents.header = header
        }
    }

    /// A rotation with its derivations made now: the write that re-seals and installs it.
    func rotation(key: VaultSecret, kdf: KDFParameters?) throws(CredentialVaultError) -> VaultChange<Void> {
        let prepare = { @Sendable (s: State, dataKey: SecureBytes) throws(CredentialVaultError) -> VaultHeader in
            let header = s.contents.header
            var parameters = KDFParameters.moderate
            if let kdf {
                parameters = kdf
            } else if header.kdf == .argon2id13 {
                parameters = try KDFParameters(opsLimit: header.opsLimit, memLimitBytes: header.memLimitBytes)
            }
            try self.verify(key, in: s)
            return try Self.wrappedHeader(
                for: key, kdf: parameters, vaultID: header.vaultID, dataKey: dataKey, generation: header.generation,
                custody: header.custody, rollbackCounter: header.hasRollbackCounter, configuration: self.configuration)
        }
        let dataKey = SecureBytes.random(count: Crypto.keyBytes)
        let new = VaultKeys(dataKey: dataKey)
        let known = try read { $0 }
        let prepared = try prepare(known, dataKey)
        return VaultChange { (s) throws(CredentialVaultError) in
            var header = Self.sameWrapping(s, as: known) ? prepared : try prepare(s, dataKey)
            header.generation = s.contents.header.generation
            for (name, entry) in s.contents.records {
                var entry = entry
                entry.sealed = try RecordCodec.reseal(entry.sealed, vaultID: s.contents.header.vaultID, from: s.keys, to: new)
                s.contents.records[name] = entry
            }
            s.contents.header = header
            // The new keys are adopted together with the file they sealed.
            s.keys = new
        }
    }

    /// Whether `s` (read under the lock) is wrapped as `known` was: the same key parameters and
    /// wrapped data key, so a header prepared from `known` is right for it.
    static func sameWrapping(_ s: State, as known: State) -> Bool {
        s.contents.header.keyParameterBytes() == known.contents.header.keyParameterBytes()
            && s.contents.header.wrappedKey == known.contents.header.wrappedKey
    }

    /// Checks that `key` unwraps this vault's current data key.
    func verify(_ key: VaultSecret, in s: State) throws(CredentialVaultError) {
        let header = s.contents.header
        let kek = try KeyWrapping.keyEncryptionKey(key, header: header, configuration: configuration)
        let unwrapped = try KeyWrapping.unwrap(header: header, kek: kek)
        guard unwrapped.constantTimeEquals(s.keys.dataKey) else { throw .wrongPassphrase }
    }

    /// Runs `body` holding the vault's lock file: other processes' writes wait (up to their
    /// bounded wait), and this store's own calls inside `body` do not re-lock. Reads inside
    /// `body` see every write made before the lock was taken.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        // Nested (or in a task started by the body, while the body still holds the lock).
        if let held = VaultLock.enterHeld(lockID) {
            defer { held.leave() }
            return try await body()
        }
        let lock = try await VaultLock.acquire(location, timeout: configuration.lockTimeout, log: LockWaitLog(configuration, vault: location.path))
        defer { lock.release() }
        var held = VaultLock.held
        held[lockID] = lock
        return try await VaultLock.$held.withValue(held) {
            try await body()
        }
    }
}
