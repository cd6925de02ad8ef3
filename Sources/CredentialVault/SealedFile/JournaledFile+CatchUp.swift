/// Catching up with another process's writes to the vault file without reading it whole.
extension JournaledFile {
    /// What the file holds beyond a known position.
    struct CatchUp {
        /// The committed entries after the known position (none: nothing was committed since).
        var entries: [[JournalOp]]
        var position: JournalPosition
        /// The fingerprint of the version read (taken before reading, so a later write always
        /// changes it).
        var fingerprint: AtomicFile.Fingerprint
    }

    /// Reads the commit records and, when the newest one extends the journal from `known`, the
    /// entries in between: a few hundred bytes instead of the whole file. `nil` when the file
    /// is not simply `known` plus committed entries (another file was renamed in by a rewrite,
    /// a commit record is damaged, anything unexpected): then the caller reads the whole file,
    /// which also reports what is wrong. The caller checks that applying the entries gives
    /// `position.recordCount` records. `writing`: the caller is a writer under the lock.
    static func catchUp(
        from known: JournalPosition, inode: AtomicFile.Fingerprint, location: FileLocation,
        macKey: SecureBytes, writing: Bool = false
    ) -> CatchUp? {
        guard let file = try? InPlaceFile(location, writable: false), let fingerprint = try? file.fingerprint(),
            fingerprint.device == inode.device, fingerprint.inode == inode.inode
        else { return nil }
        var decoded: [CommitRecord?] = []
        for (slot, offset) in CommitRecord.offsets.enumerated() {
            guard let bytes = try? file.read(at: offset, count: CommitRecord.size) else { return nil }
            decoded.append(bytes.withUnsafeBytes { CommitRecord.decode($0, macKey: macKey, slot: slot) })
        }
        // A damaged commit record a reader already knows of, with nothing committed since:
        // unchanged (the next write repairs it), not a whole-file read on every call. Exactly
        // the intact record the known state rolled forward from. A writer never takes this
        // shortcut: it reads the whole file, so that it never appends after a state that an
        // edit made since would make another reader see differently (damage is rare).
        if !writing, known.otherSlotDamaged, let intact = decoded[known.newestSlot], decoded[1 - known.newestSlot] == nil,
            intact.journalEnd < UInt64(known.end), intact.generation &+ 1 == known.generation
        {
            return CatchUp(entries: [], position: known, fingerprint: fingerprint)
        }
        // Anything but two intact records one generation apart goes to the whole-file read,
        // which applies every rule (`CommitRules`).
        guard let first = decoded[0], let second = decoded[1], first.generation != second.generation else { return nil }
        let newestSlot = second.generation > first.generation ? 1 : 0
        let (newest, older) = newestSlot == 1 ? (second, first) : (first, second)
        guard newest.generation - older.generation == 1 else { return nil }
        if newest.generation == known.generation && newest.journalEnd == UInt64(known.end) {
            guard constantTimeEquals(newest.chain, known.chain) else { return nil }
            var position = known  // both commit records decoded: none is damaged (any more)
            position.newestSlot = newestSlot
            position.otherSlotDamaged = false
            return CatchUp(entries: [], position: position, fingerprint: fingerprint)
        }
        // New commits: the older record must lie on the walk from the known state (at it, or
        // past it); one before it cannot be checked from here.
        guard newest.generation > known.generation, newest.journalEnd > UInt64(known.end),
            older.generation >= known.generation, older.journalEnd >= UInt64(known.end),
            newest.journalEnd - UInt64(known.end) <= UInt64(VaultFile.maxSize),
            let appended = try? file.read(at: known.end, count: Int(newest.journalEnd) - known.end),
            appended.count == Int(newest.journalEnd) - known.end
        else { return nil }
        // Read the appended bytes as if they sat at offset 0, then move the position back.
        var local = JournalPosition(
            generation: known.generation, end: 0, chain: known.chain, newestSlot: newestSlot, snapshotEnd: 0, recordCount: 0)
        var olderHere = older  // the older record, with its end moved back like the position
        olderHere.journalEnd -= UInt64(known.end)
        let entries = appended.withUnsafeBytes { raw in
            try? Self.entries(raw, from: &local, macKey: macKey, strict: true, passing: olderHere)
        }
        guard let entries, local.generation == newest.generation, constantTimeEquals(local.chain, newest.chain) else { return nil }
        let position = JournalPosition(
            generation: newest.generation, end: Int(newest.journalEnd), chain: newest.chain, newestSlot: newestSlot,
            snapshotEnd: known.snapshotEnd, recordCount: Int(newest.recordCount), counter: newest.counter)
        return CatchUp(entries: entries, position: position, fingerprint: fingerprint)
    }
}
