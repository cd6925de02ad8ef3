#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Keeping the in-memory state in step with the file, and the locked write path.
extension SealedFileStore {
    /// Catches up with the file when its fingerprint changed (another process wrote it): for a
    /// file still on the same inode, by reading the commit records and just the entries
    /// appended since; else by reading the whole file. `verify` (the write path, under the lock)
    /// never takes the fingerprint's word: the commit records are always checked (a writer must
    /// append after the committed end).
    /// A file replaced by another one of the same vault is also asked about at the custodians
    /// of `configuration` that may hold its counter since a move (`refuseIfAnchoredElsewhere`).
    ///
    /// What it refuses is also left in `refused`, for the caller to log (`logRefusal`) once it
    /// has let go of the store's state lock: the application's log handler never runs under
    /// it (a slow handler would hold up every other call on the store, and one that used the
    /// store would take the lock again on the same thread).
    static func refresh(
        _ state: inout State, location: FileLocation, configuration: SealedFileConfiguration, verify: Bool = false,
        refused: inout CredentialVaultError?
    ) throws(CredentialVaultError) {
        do throws(CredentialVaultError) {
            try catchUp(&state, location: location, configuration: configuration, verify: verify)
        } catch {
            refused = error
            throw error
        }
    }

    /// `refresh`, without keeping what it refuses.
    private static func catchUp(
        _ state: inout State, location: FileLocation, configuration: SealedFileConfiguration, verify: Bool
    ) throws(CredentialVaultError) {
        let current = AtomicFile.fingerprint(location)
        if current != nil && current == state.fingerprint && !verify { return }
        // The appended-entries shortcut trusts that the same inode is the same file. A copy put
        // back on a reused inode number (a pre-move copy, its bytes the ones this object last
        // read) would pass it without the question below: with a custodian configured that may
        // hold the vault's counter since a move, a change is always read whole.
        if !configuration.mayHoldCounterElsewhere(than: state.contents.header.custody),
            let known = state.fingerprint,
            let news = JournaledFile.catchUp(
                from: state.contents.journal, inode: known, location: location, macKey: state.keys.macKey,
                writing: verify)
        {
            // Forward from what this object read, but not necessarily to the newest state: an
            // older copy written in place (`cp`, same inode) that lies between this object's
            // state and the newest one catches up cleanly. Only the custodian can tell, so it
            // is asked before anything of the file is adopted (one counter read per change).
            var checked: UInt64?
            if state.contents.header.hasRollbackCounter && !state.acceptingRollback {
                guard let rollback = state.rollback else { throw .reopenRequired(.custodyChanged) }
                checked = try rollback.verify(news.position.counter)
            }
            if (try? state.contents.apply(news.entries, keys: state.keys, expectedCount: news.position.recordCount)) != nil {
                state.contents.journal = news.position
                state.fingerprint = settled(news.fingerprint, journal: news.position)
                if verify { state.checkedCounter = checked }  // under the lock: still true at the write
                return
            }
        }
        guard let (bytes, fingerprint) = try PrivateFiles.readVersion(location, rules: .vault) else {
            throw .io("the vault file \(location.path) was removed; restore it from a backup")
        }
        let header = try VaultFile.header(of: bytes)
        guard header.vaultID == state.contents.header.vaultID else {
            // Not damage: another file took the name (a restore from a backup, another vault
            // moved there). Nothing of it is read or written; the caller opens it again.
            throw .reopenRequired(.replaced)
        }
        do throws(CredentialVaultError) {
            // Under the lock (`verify`) the file is stable; without it, a verdict is re-read first.
            let (contents, read) =
                verify
                ? (try VaultContents.decode(bytes: bytes, header: header, keys: state.keys), fingerprint)
                : try VaultContents.decodeUnlocked(bytes: bytes, fingerprint: fingerprint, header: header, keys: state.keys, location: location)
            // A file replaced or rewritten by someone: an older copy put back is refused here.
            // Moved to another custodian by another process: its device key is another one now,
            // and this object's is stale (as after another process rotated the key): reopen.
            // Likewise when the counter flag differs: another process dropped or added the
            // counter, or a copy from before the vault had one was put back (no custodian can
            // refuse that one): never read as the vault this object checked, open it again.
            if contents.header.custody != state.contents.header.custody
                || contents.header.hasRollbackCounter != state.contents.header.hasRollbackCounter
            {
                throw CredentialVaultError.reopenRequired(.custodyChanged)
            }
            // A copy from before a move to another custodian put back: the user's files (the
            // counter file, the mark) may have been put back with it, that custodian cannot.
            if !state.acceptingRollback { try configuration.refuseIfAnchoredElsewhere(contents.header, movingTo: state.movingTo) }
            if contents.header.hasRollbackCounter {
                guard let rollback = state.rollback else { throw CredentialVaultError.reopenRequired(.custodyChanged) }
                // Not while a restore is being accepted (`acceptRestore`): that write replaces the counter.
                if !state.acceptingRollback {
                    let value = try rollback.verify(contents.journal.counter)
                    if verify { state.checkedCounter = value }  // under the lock: still true at the write
                }
            }
            state.contents = contents
            state.fingerprint = settled(read, journal: contents.journal)
        } catch .tampered where header.wrappedKey != state.contents.header.wrappedKey {
            // Another process rotated the data key: our key no longer opens the file.
            throw .reopenRequired(.keyChanged)
        }
    }

    /// The fingerprint to remember for a state read from a file with `fingerprint`. A file
    /// whose size is not its committed end (an append in progress, or residue) gets one
    /// no file has (keeping its device and inode), so the next read checks the commit records
    /// again. Otherwise every later commit makes the file larger than this fingerprint says
    /// (an entry is never empty), and a rewrite gives it another inode: a change is always
    /// seen, without relying on file times.
    static func settled(_ fingerprint: AtomicFile.Fingerprint, journal: JournalPosition) -> AtomicFile.Fingerprint {
        guard fingerprint.size != Int64(journal.end) else { return fingerprint }
        var unsettled = fingerprint
        unsettled.size = -1
        return unsettled
    }

    /// Reads the current state (re-reading the file if it changed).
    func read<R>(_ body: (inout State) throws(CredentialVaultError) -> R) throws(CredentialVaultError) -> R {
        var refused: CredentialVaultError?
        defer { if let refused { configuration.logRefusal(refused, vault: location.path) } }
        return try state.withLock { (s) throws(CredentialVaultError) -> R in
            defer { headerSummary.withLock { $0 = Self.summary(of: s.contents.header) } }
            try Self.refresh(&s, location: location, configuration: configuration, refused: &refused)
            return try body(&s)
        }
    }

    /// The write path: take the vault lock (`VaultLock`: the lock file and the vault file; unless
    /// this task holds it through `withExclusiveAccess`), catch up with the file under it, apply `change` to a draft of the
    /// state (contents and keys), purge expired records, write atomically and durably
    /// (`persist`), and only then adopt the draft. `changed` says from the result whether
    /// anything changed; with nothing to change or purge nothing is written. A failure leaves
    /// file and memory as they were. A write that succeeded in a directory no longer at its
    /// path (moved or replaced since the vault was opened) is kept, and then throws `io`
    /// saying so (`PrivateDirectory.checkStillAtPath`).
    ///
    /// `waiting: false` (the purges on the read path: open, `load` of an expired record) tries
    /// the lock once and throws `busy` at once when another holder has it: a reader never
    /// waits for a writer.
    ///
    /// `returnsOnceDurable`: the result is returned once the write is durable, even when what
    /// is checked after it fails (the rollback counter did not advance, the directory moved):
    /// a take, whose value exists nowhere else once the write deleted it. The counter's lag is
    /// still enforced: the next write completes the increment first, or fails before writing.
    func mutate<R>(
        waiting: Bool = true, _ change: (inout State) throws(CredentialVaultError) -> R, changed: (R) -> Bool = { _ in true },
        returnsOnceDurable: Bool = false
    ) throws(CredentialVaultError) -> R {
        let lock: VaultLock
        let acquired: VaultLock?
        if let held = VaultLock.enterHeld(lockID) {
            defer { held.leave() }
            return try mutate(holding: held, change, changed: changed, returnsOnceDurable: returnsOnceDurable)
        } else if waiting {
            lock = try VaultLock.acquire(location, timeout: configuration.lockTimeout, log: LockWaitLog(configuration, vault: location.path))
            acquired = lock
        } else {
            guard let taken = try VaultLock.tryAcquire(location) else { throw .busy }
            lock = taken
            acquired = taken
        }
        defer { acquired?.release() }
        return try mutate(holding: lock, change, changed: changed, returnsOnceDurable: returnsOnceDurable)
    }

    /// `mutate` with the vault lock already held by the caller (`lock`): the async write path,
    /// which waits for the lock without blocking a thread and then runs this on the store's.
    func mutate<R>(
        holding lock: VaultLock, _ change: (inout State) throws(CredentialVaultError) -> R, changed: (R) -> Bool,
        returnsOnceDurable: Bool = false
    ) throws(CredentialVaultError) -> R {
        let now = configuration.clock.now()
        var counterFailure: CredentialVaultError?
        var refused: CredentialVaultError?
        defer { if let refused { configuration.logRefusal(refused, vault: location.path) } }
        let (result, wrote) = try state.withLock { (s) throws(CredentialVaultError) -> (R, Bool) in
            defer { headerSummary.withLock { $0 = Self.summary(of: s.contents.header) } }
            s.checkedCounter = nil
            try Self.refresh(&s, location: location, configuration: configuration, verify: true, refused: &refused)
            // The draft takes over the record table (so that changing it copies nothing) and
            // keeps an undo log of the records it changes; everything else is small and saved.
            let before = (
                header: s.contents.header, keys: s.keys, fingerprint: s.fingerprint, journal: s.contents.journal, deviceKey: s.deviceKey,
                rollback: s.rollback, rewriteRequested: s.rewriteRequested
            )
            var draft = s
            s.contents.records = RecordTable()
            draft.contents.records.beginChanges()
            do throws(CredentialVaultError) {
                let result = try change(&draft)
                let purged = draft.contents.purgeExpired(now: now)
                guard changed(result) || purged > 0 else {
                    // Nothing to write: put back whatever the change did, keep a derived device key.
                    draft.contents.records.rollBack()
                    draft.contents.header = before.header
                    draft.keys = before.keys
                    draft.rollback = before.rollback
                    draft.rewriteRequested = before.rewriteRequested
                    s = draft
                    return (result, false)
                }
                counterFailure = try persist(&draft, previousHeader: before.header, lock: lock)
                draft.contents.records.commit()
                s = draft
                return (result, true)
            } catch {
                draft.contents.records.rollBack()
                draft.contents.header = before.header
                draft.keys = before.keys
                draft.fingerprint = before.fingerprint
                draft.contents.journal = before.journal
                draft.deviceKey = before.deviceKey
                draft.rollback = before.rollback
                draft.rewriteRequested = before.rewriteRequested
                draft.checkedCounter = nil
                s = draft
                throw error
            }
        }
        // Durable and adopted; but if its rollback counter did not advance, or the directory is
        // no longer at its path, say so (unless the result exists nowhere else: a take).
        if wrote && returnsOnceDurable { return result }
        if let counterFailure { throw counterFailure }
        if wrote { try location.directory?.checkStillAtPath(after: "the change to \(location.path)") }
        return result
    }

    /// This machine's device record key for this vault, derived once and cached. A missing host
    /// secret is made anew only when this vault has no device-only record and is not unlocked
    /// with the device key (else it is an error saying what is lost, `HostSecret`).
    func deviceKey(_ s: inout State) throws(CredentialVaultError) -> SecureBytes {
        if let key = s.deviceKey { return key }
        let key = try VaultKeys.deviceRecordKey(
            configuration: configuration, custody: s.contents.header.custody, vaultID: s.contents.header.vaultID, need: { Self.hostSecretNeed(s.contents) })
        s.deviceKey = key
        return key
    }

    /// What depends on this machine's host secret in `contents`, should it be missing.
    static func hostSecretNeed(_ contents: VaultContents) -> HostSecret.Need {
        if contents.header.keySource == .device { return .deviceKeyVault }
        let deviceOnly = contents.records.values.reduce(0) { $0 + ($1.accessibility == .deviceOnly ? 1 : 0) }
        return deviceOnly > 0 ? .deviceOnlyRecords(deviceOnly) : .none
    }
}
