import Foundation

/// Key management and cross-process exclusive access.
extension SealedFileStore {
    /// How the vault is unlocked now.
    public var keySource: KeySource { state.withLock { $0.contents.header.keySource } }

    /// The vault's format version, for example `"1.0"`.
    public var formatVersion: String { state.withLock { "\($0.contents.header.major).\($0.contents.header.minor)" } }

    /// Replaces the key that unlocks the vault (a passphrase change, or a switch between
    /// passphrase, key file and device key): the data key is re-wrapped, the records are not
    /// touched. `current` must unlock the vault (it is checked first). Atomic: after a crash the
    /// vault opens with the old key or the new one.
    public func changeKey(from current: VaultKey, to new: VaultKey, kdf: KDFParameters = .moderate) throws(CredentialVaultError) {
        try mutate { (s) throws(CredentialVaultError) in
            try verify(current, in: s)
            let need = Self.hostSecretNeed(s.contents)
            s.contents.header = try Self.wrappedHeader(
                for: new, kdf: kdf, vaultID: s.contents.header.vaultID, dataKey: s.keys.dataKey,
                generation: s.contents.header.generation, configuration: configuration, hostSecretNeed: { need })
        }
    }

    /// Makes a new random data key and re-seals every record with it (for example after a
    /// key may have leaked). `key` must unlock the vault and wraps the new data key. Device-only
    /// values keep their inner device seal, so rotation works even on another machine.
    public func rotateDataKey(key: VaultKey, kdf: KDFParameters? = nil) throws(CredentialVaultError) {
        try mutate { (s) throws(CredentialVaultError) in
            let header = s.contents.header
            var parameters = KDFParameters.moderate
            if let kdf {
                parameters = kdf
            } else if header.kdf == .argon2id13 {
                parameters = try KDFParameters(opsLimit: header.opsLimit, memLimitBytes: header.memLimitBytes)
            }
            try verify(key, in: s)
            let dataKey = SecureBytes.random(count: Crypto.keyBytes)
            let new = VaultKeys(dataKey: dataKey)
            for (name, entry) in s.contents.records {
                var entry = entry
                entry.sealed = try RecordCodec.reseal(entry.sealed, vaultID: header.vaultID, from: s.keys, to: new)
                s.contents.records[name] = entry
            }
            s.contents.header = try Self.wrappedHeader(
                for: key, kdf: parameters, vaultID: header.vaultID, dataKey: dataKey, generation: header.generation,
                configuration: configuration)
            // The new keys are adopted together with the file they sealed.
            s.keys = new
        }
    }

    /// Checks that `key` unwraps this vault's current data key.
    private func verify(_ key: VaultKey, in s: State) throws(CredentialVaultError) {
        let header = s.contents.header
        let kek = try KeyWrapping.keyEncryptionKey(key, header: header, device: configuration.resolvedDevice)
        let unwrapped = try KeyWrapping.unwrap(header: header, kek: kek)
        guard unwrapped.constantTimeEquals(s.keys.dataKey) else { throw .wrongPassphrase }
    }

    /// Runs `body` holding the vault's lock file: other processes' writes wait (up to their
    /// bounded wait), and this store's own calls inside `body` do not re-lock. Reads inside
    /// `body` see every write made before the lock was taken.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if VaultLock.held[lockID] != nil { return try await body() }
        let lock = try await VaultLock.acquire(location, timeout: configuration.lockTimeout)
        defer { lock.release() }
        var held = VaultLock.held
        held[lockID] = lock
        return try await VaultLock.$held.withValue(held) {
            try await body()
        }
    }
}
