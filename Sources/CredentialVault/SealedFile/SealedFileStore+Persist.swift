#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writing a changed state to the file: a journal entry, or the whole file.
extension SealedFileStore {
    /// The journal may grow to the snapshot's size, and at least to this, before a write
    /// rewrites the whole file. Appends then cost the same at any vault size, and rewrites
    /// (each as costly as the file is large) come once per snapshot's worth of appends, so
    /// their cost per save stays constant too.
    static let minimumJournalLimit = 64 << 10

    /// Makes `draft` durable. A vault whose key did not change gets one journal entry with the
    /// records changed since `beginChanges()` (`InPlaceFile.commit`); a new key, or a journal
    /// past its limit (or one that would take the file past `VaultFile.maxSize`, or a state at
    /// the last generation, 2^64 - 1), rewrites the whole file atomically. The caller has
    /// verified the file's commit records under the lock (`refresh(_:url:verify:)`), so the
    /// position appended after is the committed one. Sets the draft's generation, journal
    /// position and fingerprint; on failure the file is unchanged (see `InPlaceFile.commit` for
    /// the one exception) and the draft must be discarded. `lock` is the vault lock held.
    /// Returns the error of a rollback counter that could not be advanced after the write was
    /// durable (`RollbackGuard.committed`): the draft is then the file's state, and the caller
    /// adopts it before reporting the error.
    func persist(_ draft: inout State, previousHeader: VaultHeader, lock: VaultLock) throws(CredentialVaultError) -> CredentialVaultError? {
        let contents = draft.contents
        guard contents.header.hasRollbackCounter == (draft.rollback != nil) else {
            throw .reopenRequired(.custodyChanged)
        }
        // The counter value the new state carries (checked against the custodian first).
        let known = contents.journal.counter
        let stamp = try draft.rollback?.next(after: known, known: draft.checkedCounter) ?? known
        draft.checkedCounter = nil
        guard try persist(&draft, previousHeader: previousHeader, lock: lock, stamp: stamp) else { return nil }
        return draft.rollback?.committed(stamp)
    }

    /// Writes the draft with `stamp` in its commit records; `false` when there was nothing to write.
    private func persist(
        _ draft: inout State, previousHeader: VaultHeader, lock: VaultLock, stamp: RollbackStamp
    ) throws(CredentialVaultError) -> Bool {
        let contents = draft.contents
        if contents.header == previousHeader, let known = draft.fingerprint, !draft.rewriteRequested {
            let journal = contents.journal
            let ops = contents.pendingOps()
            if ops.isEmpty { return false }  // put back as it was: nothing to write
            let macKey = draft.keys.macKey
            let (entry, chain) = JournalEntry.encode(ops, after: journal.chain, macKey: macKey)
            let limit = max(journal.snapshotEnd, Self.minimumJournalLimit)
            // At the last generation an entry has no next one to take: the rewrite below
            // starts again at 0 (both commit records then name the snapshot, whatever the
            // generation; only a file written elsewhere gets this far, 2^64 saves being out of reach).
            if journal.journalBytes + entry.count <= limit, journal.end + entry.count <= VaultFile.maxSize,
                journal.generation < UInt64.max
            {
                let file = try InPlaceFile(location, writable: true)
                let size = try file.check(expected: known, reaches: journal.end)
                var journal = journal
                if journal.otherSlotDamaged {
                    // First make both commit records intact again, the damaged one naming this
                    // position (the rolled-forward entry), so that two intact records are always
                    // one generation apart and a crash in the append below leaves residue only.
                    let repaired = CommitRecord(
                        generation: journal.generation, journalEnd: UInt64(journal.end), recordCount: UInt32(journal.recordCount),
                        chain: journal.chain, counter: journal.counter)
                    let damagedSlot = 1 - journal.newestSlot
                    try file.repair(
                        commitRecord: repaired.encoded(macKey: macKey, slot: damagedSlot),
                        at: CommitRecord.offsets[damagedSlot])
                    journal.newestSlot = damagedSlot
                    journal.otherSlotDamaged = false
                }
                let commit = CommitRecord(
                    generation: journal.generation + 1, journalEnd: UInt64(journal.end + entry.count),
                    recordCount: UInt32(contents.records.count), chain: chain, counter: stamp)
                let slot = 1 - journal.newestSlot
                let encoded = commit.encoded(macKey: macKey, slot: slot)
                try file.commit(
                    entry: entry, at: journal.end, size: size, commitRecord: encoded,
                    commitOffset: CommitRecord.offsets[slot])
                draft.contents.journal = JournalPosition(
                    generation: commit.generation, end: Int(commit.journalEnd), chain: chain, newestSlot: slot,
                    snapshotEnd: journal.snapshotEnd, recordCount: contents.records.count, counter: stamp)
                // Durable now: a failing fstat must not turn it into a reported failure (no
                // fingerprint only means the next read checks the file).
                draft.fingerprint = try? file.fingerprint()
                return true
            }
        }
        try rewrite(&draft, lock: lock, stamp: stamp)
        return true
    }

    /// Replaces the whole file with the draft's state (a fresh snapshot and an empty journal),
    /// atomically and durably; the new file is locked by `lock` (the vault lock held)
    /// before it takes the vault's name, and replaces only the file read under that lock.
    private func rewrite(_ draft: inout State, lock: VaultLock, stamp: RollbackStamp) throws(CredentialVaultError) {
        let generation = draft.contents.journal.generation &+ 1
        draft.contents.header.generation = generation
        draft.contents.header.recordCount = UInt32(draft.contents.records.count)
        let (bytes, journal) = JournaledFile.serialize(
            header: draft.contents.header, records: draft.contents.records.values, macKey: draft.keys.macKey, counter: stamp)
        guard bytes.count <= VaultFile.maxSize else {
            throw .invalidArgument("the vault would grow past \(VaultFile.maxSize >> 20) MiB; nothing was changed")
        }
        // Under the lock no other write is in progress: temp files left now are a dead
        // writer's, and go before they pile up.
        AtomicFile.removeStaleTemporaries(of: location)
        try AtomicFile.write(bytes, to: location, replacing: draft.fingerprint, lock: lock)
        draft.contents.journal = journal
        draft.fingerprint = AtomicFile.fingerprint(location)
        draft.rewriteRequested = false
    }
}
