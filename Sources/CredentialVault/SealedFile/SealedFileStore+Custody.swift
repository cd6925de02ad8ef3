#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Custody of the device key and the rollback counter: moving a vault to another custodian,
/// and accepting a deliberate restore from a backup.
extension SealedFileStore {
    /// Who keeps this vault's device secret and rollback counter (from its header).
    public var custody: DeviceCustody { headerSummary.withLock { $0.custody } }

    /// Whether this vault has a rollback counter (format 6.0).
    public var hasRollbackCounter: Bool { headerSummary.withLock { $0.rollbackCounter } }

    /// Moves the vault to `custody` (whose custodian the configuration must offer): the data key
    /// is wrapped again (one key derivation with `key`, which must unlock the vault), every
    /// device-only value is sealed again with the new device key, a new rollback counter is made
    /// at the new custodian (`rollbackCounter`, default: with keyring and TPM custody) and the
    /// old one removed. The file is rewritten atomically: a failure leaves the vault as it was
    /// (and removes the new counter).
    public func changeCustody(to custody: DeviceCustody, key: VaultKey, rollbackCounter: Bool? = nil) throws(CredentialVaultError) {
        let withCounter = rollbackCounter ?? (custody != .file)
        let known = try read { $0 }
        try verify(key, in: known)
        let old = known.contents.header
        let kdf = old.kdf == .argon2id13 ? try KDFParameters(opsLimit: old.opsLimit, memLimitBytes: old.memLimitBytes) : .moderate
        let header = try Self.wrappedHeader(
            for: key, kdf: kdf, vaultID: old.vaultID, dataKey: known.keys.dataKey, generation: old.generation, custody: custody,
            rollbackCounter: withCounter, configuration: configuration, hostSecretNeed: { .none })
        let newDeviceKey = try VaultKeys.deviceRecordKey(
            configuration: configuration, custody: custody, vaultID: old.vaultID, need: { .none })
        var newGuard: RollbackGuard?
        var newStamp = RollbackStamp()
        if withCounter {
            let made = try configuration.rollbackGuard(custody: custody, vaultID: old.vaultID, need: { .none })
            let counter = try made.custodian.createCounter(vaultID: old.vaultID, binding: made.binding)
            (newGuard, newStamp) = (made, RollbackStamp(reference: counter.reference, value: counter.value))
        }
        let oldGuard = known.rollback, oldStamp = known.contents.journal?.counter ?? RollbackStamp()
        let change = VaultChange { [newGuard, newStamp] (s) throws(CredentialVaultError) in
            // Another process changed the key meanwhile: the prepared wrap is for another one.
            guard s.keys.dataKey.constantTimeEquals(known.keys.dataKey), s.contents.header.custody == old.custody else {
                throw CredentialVaultError.locked
            }
            for (name, entry) in s.contents.records where entry.accessibility == .deviceOnly {
                let value = try RecordCodec.openValue(entry.sealed, vaultID: old.vaultID, keys: s.keys) { () throws(CredentialVaultError) in
                    try self.deviceKey(&s)
                }
                s.contents.records[name] = RecordCodec.seal(
                    key: entry.key, value: value, accessibility: .deviceOnly, expiresAtMillis: entry.expiresAtMillis,
                    vaultID: old.vaultID, keys: s.keys, deviceKey: newDeviceKey, padded: RecordCodec.pads(header), times: entry.times)
            }
            var moved = header
            moved.generation = s.contents.header.generation
            s.contents.header = moved
            s.deviceKey = newDeviceKey
            s.rollback = newGuard
            s.contents.journal?.counter = newStamp
            s.checkedCounter = nil  // that was the old custodian's
            s.rewriteRequested = true
        }
        do {
            try write(change)
        } catch {
            if let newGuard { try? newGuard.custodian.removeCounter(vaultID: old.vaultID, reference: newStamp.reference, binding: newGuard.binding) }
            throw error
        }
        if let oldGuard, !(withCounter && oldGuard.custodian.custody == custody && oldStamp.reference == newStamp.reference) {
            try? oldGuard.custodian.removeCounter(vaultID: old.vaultID, reference: oldStamp.reference, binding: oldGuard.binding)
        }
    }

    /// Opens a vault that its rollback counter refuses (`rolledBack`), because it was restored
    /// from a backup on purpose, and makes the restored state the current one: the file is
    /// rewritten with the custodian's counter value (a new counter when it is missing, as on
    /// another machine), so that every older copy, including the one just replaced, is refused
    /// from now on. Credentials revoked or used since that backup are back: that is what a
    /// restore means, and why it is never done without this call (`credvault accept-restore`).
    public static func acceptRestore(
        at url: URL, key: VaultKey, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        let store = try LockedVault(url: url).unlock(with: key, configuration: configuration, acceptingRollback: true)
        try store.write(
            VaultChange { (s) throws(CredentialVaultError) in
                guard let rollback = s.rollback, var journal = s.contents.journal else { return }
                var stamp = journal.counter
                if let value = try rollback.custodian.readCounter(vaultID: rollback.vaultID, reference: stamp.reference, binding: rollback.binding) {
                    stamp.value = value
                } else {
                    let made = try rollback.custodian.createCounter(vaultID: rollback.vaultID, binding: rollback.binding)
                    stamp = RollbackStamp(reference: made.reference, value: made.value)
                }
                journal.counter = stamp
                s.contents.journal = journal
                s.checkedCounter = nil
                s.rewriteRequested = true
            })
        return store
    }
}
