/// Catching up with another process's writes to a format-3 file without reading it whole.
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
    /// `position.recordCount` records.
    static func catchUp(from known: JournalPosition, inode: AtomicFile.Fingerprint, location: FileLocation, macKey: SecureBytes) -> CatchUp? {
        guard let file = try? InPlaceFile(location, writable: false), let fingerprint = try? file.fingerprint(),
            fingerprint.device == inode.device, fingerprint.inode == inode.inode
        else { return nil }
        var decoded: [CommitRecord?] = []
        for offset in CommitRecord.offsets {
            guard let bytes = try? file.read(at: offset, count: CommitRecord.size) else { return nil }
            decoded.append(bytes.withUnsafeBytes { CommitRecord.decode($0, macKey: macKey) })
        }
        // A damaged commit record the caller already knows of, with nothing committed since:
        // unchanged (the next write repairs it), not a whole-file read on every call.
        if known.otherSlotDamaged, let intact = decoded[known.newestSlot], decoded[1 - known.newestSlot] == nil,
            intact.journalEnd <= UInt64(known.end), intact.generation <= known.generation
        {
            return CatchUp(entries: [], position: known, fingerprint: fingerprint)
        }
        let commits = decoded.compactMap { $0 }
        guard commits.count == 2 else { return nil }
        let newestSlot = commits[1].generation > commits[0].generation ? 1 : 0
        let newest = commits[newestSlot]
        if newest.generation == known.generation && newest.journalEnd == UInt64(known.end) {
            guard constantTimeEquals(newest.chain, known.chain) else { return nil }
            var position = known  // both commit records decoded: none is damaged (any more)
            position.newestSlot = newestSlot
            position.otherSlotDamaged = false
            return CatchUp(entries: [], position: position, fingerprint: fingerprint)
        }
        guard newest.generation > known.generation, newest.journalEnd > UInt64(known.end),
            newest.journalEnd - UInt64(known.end) <= UInt64(VaultFile.maxSize),
            let appended = try? file.read(at: known.end, count: Int(newest.journalEnd) - known.end),
            appended.count == Int(newest.journalEnd) - known.end
        else { return nil }
        // Read the appended bytes as if they sat at offset 0, then move the position back.
        var local = JournalPosition(
            generation: known.generation, end: 0, chain: known.chain, newestSlot: newestSlot, snapshotEnd: 0, recordCount: 0)
        let entries = appended.withUnsafeBytes { raw in
            try? Self.entries(raw, from: &local, macKey: macKey, strict: true)
        }
        guard let entries, local.generation == newest.generation, constantTimeEquals(local.chain, newest.chain) else { return nil }
        let position = JournalPosition(
            generation: newest.generation, end: Int(newest.journalEnd), chain: newest.chain, newestSlot: newestSlot,
            snapshotEnd: known.snapshotEnd, recordCount: Int(newest.recordCount))
        return CatchUp(entries: entries, position: position, fingerprint: fingerprint)
    }
}
