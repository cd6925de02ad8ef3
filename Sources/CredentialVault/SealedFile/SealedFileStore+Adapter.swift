#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `TokenStorageAdapter` conformance. Each operation is written once (a `VaultChange` for the
/// writes, a read of the state for the others) and run by both the synchronous API here and
/// the asynchronous one (`SealedFileStore+Async.swift`).
extension SealedFileStore {
    /// Seals `value` into a new record (device-only values a second time with the device key)
    /// and writes the vault durably before returning.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try write(saving(value, for: key, options: options))
    }

    /// The value, opened from memory (the file is re-read only if it changed).
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let found = try read { (s) throws(CredentialVaultError) -> (RecordEntry, VaultKeys, [UInt8])? in
            s.contents.records[key].map { ($0, s.keys, s.contents.header.vaultID) }
        }
        guard let (entry, keys, vaultID) = found else { return nil }
        if entry.isExpired(at: configuration.clock.now()) {
            // Purge it, unless it was replaced in the meantime; never waiting for the lock.
            _ = try? write(purging(entry, of: key), waiting: false)
            throw .expired
        }
        return try RecordCodec.openValue(entry.sealed, vaultID: vaultID, keys: keys) { () throws(CredentialVaultError) in
            try state.withLock { (s) throws(CredentialVaultError) in try self.deviceKey(&s) }
        }
    }

    /// Opens and deletes the record in one locked write: concurrent takers, in this process or
    /// others, never both get it. Nothing is deleted when the value cannot be opened. Once the
    /// delete is durable the value is returned, even when the rollback counter could not be
    /// advanced after it (the next write reports that): it exists nowhere else.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try Self.outcome(of: write(taking(key)))
    }

    /// Deletes the record (nothing is written when there is none).
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try write(deleting(key))
    }

    /// Persistent keys, sorted; names are decrypted in memory, no value is opened.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        try read { s in Self.keys(in: s, service: service) }
    }

    /// Accessibility and lifetime of a record (expired ones are reported missing).
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let now = configuration.clock.now()
        return try read { s in Self.metadata(of: key, in: s, now: now) }
    }

    /// Deletes every record (of one service when given) in one write.
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        try write(deletingAll(service: service))
    }

    // MARK: - The operations, shared by both APIs

    /// One write of the vault: what `mutate` applies to the state under the lock, and whether
    /// its result changed anything (nothing is written when not).
    struct VaultChange<R: Sendable>: Sendable {
        let apply: @Sendable (inout State) throws(CredentialVaultError) -> R
        var changed: @Sendable (R) -> Bool = { _ in true }
        /// Whether the result is returned once the write is durable, even when a check after it
        /// fails (`mutate`'s `returnsOnceDurable`): a take's value exists nowhere else.
        var returnsOnceDurable = false
    }

    /// Runs `change` through the synchronous write path (see `mutate`).
    func write<R>(_ change: VaultChange<R>, waiting: Bool = true) throws(CredentialVaultError) -> R {
        try mutate(waiting: waiting, change.apply, changed: change.changed, returnsOnceDurable: change.returnsOnceDurable)
    }

    func saving(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) -> VaultChange<Void> {
        try key.validate()
        try capabilities.check(options)
        guard value.count <= 64 << 20 else { throw .invalidArgument("a credential is limited to 64 MiB") }
        let expiry: UInt64 =
            if case .ephemeral(let ttl) = options.lifetime {
                Self.expiryMillis(now: configuration.clock.now(), ttl: ttl)
            } else { 0 }
        return VaultChange { (s) throws(CredentialVaultError) in
            let deviceKey = options.accessibility == .deviceOnly ? try self.deviceKey(&s) : nil
            let header = s.contents.header
            // Taken under the lock, so that saves of a key are dated in the order they were written.
            let now = self.configuration.clock.now()
            let times = RecordTimes(savingAt: now, replacing: s.contents.records[key])
            s.contents.records[key] = RecordCodec.seal(
                key: key, value: value, accessibility: options.accessibility, expiresAtMillis: expiry,
                vaultID: header.vaultID, keys: s.keys, deviceKey: deviceKey, times: times)
        }
    }

    /// The Unix time in milliseconds `ttl` after `now`, for a record's expiry: at least 1 (0
    /// means persistent) and never a trap, whatever a clock says (before 1970, far ahead).
    static func expiryMillis(now: Date, ttl: Duration) -> UInt64 {
        let millis = ((now.timeIntervalSince1970 + ttl.timeInterval) * 1000).rounded(.up)
        guard millis.isFinite, millis >= 1 else { return 1 }
        return millis < 0x1p63 ? UInt64(millis) : UInt64(1) << 63
    }

    /// Removes an expired record found by a read, unless it was replaced in the meantime.
    func purging(_ entry: RecordEntry, of key: CredentialKey) -> VaultChange<Void> {
        VaultChange { s in
            if s.contents.records[key]?.sealed.id == entry.sealed.id { s.contents.records[key] = nil }
        }
    }

    enum Taken: Sendable {
        case value(Data)
        case missing
        case expired
    }

    func taking(_ key: CredentialKey) throws(CredentialVaultError) -> VaultChange<Taken> {
        try key.validate()
        let now = configuration.clock.now()
        return VaultChange(
            apply: { (s) throws(CredentialVaultError) -> Taken in
                guard let entry = s.contents.records[key] else { return .missing }
                if entry.isExpired(at: now) { return .expired }  // purged by the write
                let deviceKey = entry.accessibility == .deviceOnly ? try self.deviceKey(&s) : nil
                let value = try RecordCodec.openValue(entry.sealed, vaultID: s.contents.header.vaultID, keys: s.keys) {
                    () throws(CredentialVaultError) in deviceKey!
                }
                s.contents.records[key] = nil
                return .value(value)
            }, changed: { if case .missing = $0 { false } else { true } }, returnsOnceDurable: true)
    }

    static func outcome(of taken: Taken) throws(CredentialVaultError) -> Data? {
        switch taken {
        case .value(let data): return data
        case .missing: return nil
        case .expired: throw .expired
        }
    }

    func deleting(_ key: CredentialKey) throws(CredentialVaultError) -> VaultChange<Bool> {
        try key.validate()
        return VaultChange(apply: { $0.contents.records.removeValue(forKey: key) != nil }, changed: { $0 })
    }

    func deletingAll(service: String?) -> VaultChange<Int> {
        VaultChange(
            apply: { s in
                let doomed = s.contents.records.keys.filter { $0.isIn(service: service) }
                for key in doomed { s.contents.records[key] = nil }
                return doomed.count
            }, changed: { $0 > 0 })
    }

    static func keys(in s: State, service: String?) -> [CredentialKey] {
        s.contents.records.values
            .filter { !$0.isEphemeral && $0.key.isIn(service: service) }
            .map(\.key)
            .sorted(by: CredentialKey.storageOrder)
    }

    static func metadata(of key: CredentialKey, in s: State, now: Date) -> CredentialMetadata? {
        guard let entry = s.contents.records[key], !entry.isExpired(at: now) else { return nil }
        return entry.metadata
    }
}
