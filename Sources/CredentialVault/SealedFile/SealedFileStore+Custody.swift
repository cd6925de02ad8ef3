#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Custody of the device key and the rollback counter: moving a vault to another custodian,
/// and accepting a deliberate restore from a backup.
extension SealedFileStore {
    /// Who keeps this vault's device secret and rollback counter (from its header).
    public var custody: DeviceCustody { headerSummary.withLock { $0.custody } }

    /// Whether this vault has a rollback counter.
    public var hasRollbackCounter: Bool { headerSummary.withLock { $0.rollbackCounter } }

    /// Moves the vault to `custody` (whose custodian the configuration must offer): the data key
    /// is wrapped again (one key derivation with `key`, which must unlock the vault), every
    /// device-only value is sealed again with the new device key, a new rollback counter is made
    /// at the new custodian (`rollbackCounter`, default: with keyring and TPM custody) and the
    /// old one removed. The file is rewritten atomically: a failure leaves the vault as it was
    /// (and removes the new counter).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func changeCustody(to custody: DeviceCustody, secret key: VaultSecret, rollbackCounter: Bool? = nil) throws(CredentialVaultError) {
        let known = try read { $0 }
        // Unasked, a vault keeps a counter it has: a move never drops protection silently.
        let withCounter = rollbackCounter ?? (custody != .file || known.contents.header.hasRollbackCounter)
        try verify(key, in: known)
        let old = known.contents.header
        let kdf = old.kdf == .argon2id13 ? try KDFParameters(opsLimit: old.opsLimit, memLimitBytes: old.memLimitBytes) : .moderate
        let header = try Self.wrappedHeader(
            for: key, kdf: kdf, vaultID: old.vaultID, dataKey: known.keys.dataKey, generation: old.generation, custody: custody,
            rollbackCounter: withCounter, configuration: configuration, hostSecretNeed: { .none })
        let newDeviceKey = try VaultKeys.deviceRecordKey(
            configuration: configuration, custody: custody, vaultID: old.vaultID, need: { .none })
        // The counters are made and removed under the vault lock, with the vault read again under
        // it: no other writer can then name the counter this call makes, or stop naming the one
        // it removes, in between. (Outside it, a move that failed or lost a race removed the
        // counter the vault lives on, and the vault refused itself from then on.)
        try holdingVaultLock { () throws(CredentialVaultError) in
            let current = try read { $0 }
            // Another process moved it or changed its key meanwhile.
            guard current.keys.dataKey.constantTimeEquals(known.keys.dataKey) else { throw CredentialVaultError.reopenRequired(.keyChanged) }
            // Its secret changed (`changeSecret`: the same data key, another wrapping): the header
            // prepared above would put the old wrapping back. Refused as `changeSecret` refuses it.
            if !Self.sameWrapping(current, as: known) {
                try verify(key, in: current)  // `wrongPassphrase` when `key` no longer unlocks it
                throw CredentialVaultError.reopenRequired(.keyChanged)
            }
            guard current.contents.header.custody == old.custody, current.contents.header.hasRollbackCounter == old.hasRollbackCounter
            else { throw CredentialVaultError.reopenRequired(.custodyChanged) }
            let oldGuard = current.rollback, oldStamp = current.contents.journal.counter
            // The counter the vault lives on now (moving to the same custodian gets it back from
            // `createCounter`): never removed by this call.
            func isLive(_ reference: UInt32) -> Bool {
                guard let oldGuard else { return false }
                return oldGuard.custodian.custody == custody && oldStamp.reference == reference
            }
            var newGuard: RollbackGuard?
            var newStamp = RollbackStamp()
            if withCounter {
                let made = try configuration.rollbackGuard(custody: custody, vaultID: old.vaultID, need: { .none })
                let counter = try made.custodian.createCounter(vaultID: old.vaultID, binding: made.binding)
                (newGuard, newStamp) = (made, RollbackStamp(reference: counter.reference, value: counter.value))
            }
            let change = VaultChange { [newGuard, newStamp] (s) throws(CredentialVaultError) in
                // Another process changed the key meanwhile: the prepared wrap is for another one.
                guard s.keys.dataKey.constantTimeEquals(known.keys.dataKey), Self.sameWrapping(s, as: known) else {
                    throw CredentialVaultError.reopenRequired(.keyChanged)
                }
                guard s.contents.header.custody == old.custody else { throw CredentialVaultError.reopenRequired(.custodyChanged) }
                for (name, entry) in s.contents.records where entry.accessibility == .deviceOnly {
                    let value = try RecordCodec.openValue(entry.sealed, vaultID: old.vaultID, keys: s.keys) { () throws(CredentialVaultError) in
                        try self.deviceKey(&s)
                    }
                    s.contents.records[name] = RecordCodec.seal(
                        key: entry.key, value: value, accessibility: .deviceOnly, expiresAtMillis: entry.expiresAtMillis,
                        vaultID: old.vaultID, keys: s.keys, deviceKey: newDeviceKey, times: entry.times)
                }
                var moved = header
                moved.generation = s.contents.header.generation
                s.contents.header = moved
                s.deviceKey = newDeviceKey
                s.rollback = newGuard
                s.contents.journal.counter = newStamp
                s.checkedCounter = nil  // that was the old custodian's
                s.rewriteRequested = true
            }
            // Dropping the counter: the mark goes first (a crash then leaves the vault with its
            // counter and no mark, which opens; never a vault without a counter that its own
            // mark refuses). Adding one: the mark follows the write, for the same reason.
            if old.hasRollbackCounter && !withCounter { try configuration.markRollbackProtected(old.vaultID, false) }
            state.withLock { $0.movingTo = custody }
            defer { state.withLock { $0.movingTo = nil } }
            do throws(CredentialVaultError) {
                try write(change)
                if withCounter { try? configuration.markRollbackProtected(old.vaultID, true) }
            } catch {
                if old.hasRollbackCounter && !withCounter { try? configuration.markRollbackProtected(old.vaultID, true) }
                if let newGuard, !isLive(newStamp.reference) {
                    try? newGuard.custodian.removeCounter(vaultID: old.vaultID, reference: newStamp.reference, binding: newGuard.binding)
                }
                throw error
            }
            if let oldGuard, !(withCounter && isLive(newStamp.reference)) {
                do throws(CredentialVaultError) {
                    try oldGuard.custodian.removeCounter(vaultID: old.vaultID, reference: oldStamp.reference, binding: oldGuard.binding)
                } catch {
                    // A left-over counter is harmless, except one found from the vault id alone:
                    // that one makes every open refuse the moved vault as an older copy.
                    if (try? oldGuard.custodian.anchoredCounter(vaultID: old.vaultID)) != nil {
                        throw CredentialVaultError.io(
                            "the vault moved to \(custody.name) custody, but its counter at the \(old.custody.name) custodian could not be removed (\(error)): until it is, the vault is refused as an older copy; remove it with credvault accept-restore")
                    }
                    configuration.logger.info(
                        "the old rollback counter at the \(old.custody.name) custodian could not be removed (\(error)); harmless, left there",
                        metadata: ["vault": .string(location.path)])
                }
            }
        }
        configuration.logger.info(
            "custody moved from \(old.custody.name) to \(custody.name), \(withCounter ? "with" : "without") a rollback counter",
            metadata: ["vault": .string(location.path)])
    }

    /// Whether the vault's own custodian accepts this copy: it has no counter (and no mark, see
    /// `acceptRestore`), or the counter agrees with it.
    private func agreesWithItsOwnCounter() -> Bool {
        let (rollback, stamp) = state.withLock { ($0.rollback, $0.contents.journal.counter) }
        guard let rollback else { return true }
        return (try? rollback.verify(stamp)) != nil
    }

    /// Runs `body` holding the vault lock (this task's, when it holds it already), so that the
    /// store's own writes inside do not lock again.
    func holdingVaultLock(_ body: () throws(CredentialVaultError) -> Void) throws(CredentialVaultError) {
        if let held = VaultLock.enterHeld(lockID) {
            defer { held.leave() }
            return try body()
        }
        let lock = try VaultLock.acquire(location, timeout: configuration.lockTimeout, log: LockWaitLog(configuration, vault: location.path))
        defer { lock.release() }
        var locks = VaultLock.held
        locks[lockID] = lock
        let failure = VaultLock.$held.withValue(locks) { () -> CredentialVaultError? in
            do throws(CredentialVaultError) {
                try body()
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Opens a vault that its rollback counter refuses (`rolledBack`), because it was restored
    /// from a backup on purpose, and makes the restored state the current one: the file is
    /// rewritten with the custodian's counter value (a new counter when it is missing, as on
    /// another machine), so that every older copy, including the one just replaced, is refused
    /// from now on. Credentials revoked or used since that backup are back: that is what a
    /// restore means, and why it is never done without this call (`credvault accept-restore`).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func acceptRestore(
        at url: URL, secret key: VaultSecret, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        let store = try LockedVault(url: url).unlock(with: key, configuration: configuration, acceptingRollback: true)
        let (vaultID, need) = store.state.withLock { ($0.contents.header.vaultID, hostSecretNeed($0.contents)) }
        // A counter another custodian holds (a move to it that this copy predates or that did
        // not finish) goes: this copy is the vault now, under the custody it names.
        let released = try configuration.releaseAnchoredCounters(of: vaultID, besides: store.custody, need: { need })
        if !store.hasRollbackCounter, try configuration.isMarkedRollbackProtected(vaultID) {
            // A copy from before the vault got its counter, restored on purpose: it becomes the
            // vault (without a counter, as it was then); `changeCustody` can add one again.
            try configuration.markRollbackProtected(vaultID, false)
            store.state.withLock { $0.acceptingRollback = false }
            configuration.logger.info(
                "a restored copy from before the vault had a rollback counter was accepted as the vault (without a counter)",
                metadata: ["vault": .string(store.location.path)])
            return store
        }
        if released, store.agreesWithItsOwnCounter() {
            // Refused only for that counter: nothing else to accept.
            store.state.withLock { $0.acceptingRollback = false }
            configuration.logger.info(
                "a restore was accepted by removing another custodian's counter of the vault; the vault itself was unchanged",
                metadata: ["vault": .string(store.location.path)])
            return store
        }
        try store.write(
            VaultChange { (s) throws(CredentialVaultError) in
                s.acceptingRollback = false  // from this write on, the counter is checked again
                var journal = s.contents.journal
                guard let rollback = s.rollback else {
                    throw CredentialVaultError.invalidArgument(
                        "this vault has no rollback counter: there is no restore to accept; nothing was changed")
                }
                // A vault its counter accepts is not a restore: rewriting it would only report a
                // success that accepted nothing (and take the counter a step further for nothing).
                do throws(CredentialVaultError) {
                    try rollback.verify(journal.counter)
                    throw CredentialVaultError.invalidArgument(
                        "this vault is not rolled back (it agrees with the \(rollback.custodian.custody.name) custodian's counter): there is no restore to accept; nothing was changed")
                } catch .rolledBack {}
                var stamp = journal.counter
                if let value = try rollback.custodian.readCounter(vaultID: rollback.vaultID, reference: stamp.reference, binding: rollback.binding) {
                    // One past the counter: the write first moves the counter there and then
                    // writes one more, so the copy this restore replaces, which may carry the
                    // counter's value plus one (an interrupted increment), is refused too.
                    guard value < UInt64.max else { throw CredentialVaultError.invalidArgument("the vault's rollback counter is at its maximum") }
                    stamp.value = value + 1
                } else {
                    let made = try rollback.custodian.createCounter(vaultID: rollback.vaultID, binding: rollback.binding)
                    stamp = RollbackStamp(reference: made.reference, value: made.value)
                }
                journal.counter = stamp
                s.contents.journal = journal
                s.checkedCounter = nil
                s.rewriteRequested = true
            })
        configuration.logger.info(
            "a restored copy was accepted as the vault: its rollback counter moved past it, so every older copy is refused",
            metadata: ["vault": .string(store.location.path)])
        return store
    }
}
