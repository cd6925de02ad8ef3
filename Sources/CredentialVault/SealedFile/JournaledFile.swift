/// Where a vault's journal stands: what the next write appends after and commits.
struct JournalPosition: Sendable, Equatable {
    /// The generation of the newest commit (the header's, plus one per journal entry).
    var generation: UInt64
    /// The file offset just after the last committed entry: the next entry goes there.
    var end: Int
    /// The chain value after the last committed entry (the snapshot MAC when there is none).
    var chain: [UInt8]
    /// The commit record (0 or 1) naming the newest commit; the next commit overwrites the other.
    var newestSlot: Int
    /// Where the snapshot ends and the journal starts.
    var snapshotEnd: Int
    /// How many records the vault holds at this position.
    var recordCount: Int
    /// The other commit record is damaged (a torn write): this position includes the entry
    /// rolled forward past the intact one, and the next write first repairs the damaged record
    /// with this position, so that no more than one entry past an intact record is ever rolled
    /// forward and two intact records are always one generation apart.
    var otherSlotDamaged = false
    /// The rollback counter of the state: the newest commit record's, one more for a
    /// rolled-forward entry of a vault with a counter (whose torn commit record carried it).
    var counter = RollbackStamp()

    /// The journal's size in bytes.
    var journalBytes: Int { end - snapshotEnd }
}

/// The whole vault file: a snapshot of the records, then a journal of the writes since
/// (docs/FORMAT.md).
///
///     header (156) ‖ zeros to 4096 ‖ commit record 0 ‖ zeros to 8192 ‖ commit record 1 ‖ zeros to 12288
///     ‖ record* ‖ snapshot MAC (32) ‖ journal entry* ‖ [residue of an interrupted append]
///
/// A save appends one entry and then commits it by overwriting the older commit record, each
/// step made durable before the next; the whole file is rewritten (atomically, by rename) only
/// for a new vault, a new key, or once the journal outgrows the snapshot. So a save costs the
/// same at any vault size, and a crash leaves either commit record naming a complete state.
enum JournaledFile {
    static let snapshotLabel: StaticString = "CRDVAULT snapshot"
    /// The smallest vault file: up to the snapshot, an empty table and its MAC.
    static let minimumSize = CommitRecord.snapshotOffset + Crypto.macBytes

    /// A whole file for these records: both commit records name the snapshot, the journal is
    /// empty. Returns the bytes and the journal position they describe.
    static func serialize(
        header: VaultHeader, records: Dictionary<CredentialKey, RecordEntry>.Values, macKey: SecureBytes,
        counter: RollbackStamp = RollbackStamp()
    ) -> (bytes: [UInt8], position: JournalPosition) {
        var snapshotMAC: [UInt8] = []
        var bytes = VaultFile.layOut(header: header, records: records, tableOffset: CommitRecord.snapshotOffset) { head, table in
            snapshotMAC = VaultFile.tableMAC(header: head, table: table, macKey: macKey, recordRanges: nil, label: snapshotLabel)
            return snapshotMAC
        }
        let commit = CommitRecord(
            generation: header.generation, journalEnd: UInt64(bytes.count), recordCount: header.recordCount, chain: snapshotMAC,
            counter: counter)
        for (slot, offset) in CommitRecord.offsets.enumerated() {
            let encoded = commit.encoded(macKey: macKey, slot: slot)
            bytes.replaceSubrange(offset..<offset + encoded.count, with: encoded)
        }
        let position = JournalPosition(
            generation: header.generation, end: bytes.count, chain: snapshotMAC, newestSlot: 0, snapshotEnd: bytes.count,
            recordCount: Int(header.recordCount), counter: counter)
        return (bytes, position)
    }

    /// What a whole file holds, authenticated but not yet opened record by record.
    struct Contents {
        var snapshot: [SealedRecord]
        /// The committed entries' changes, in order.
        var committed: [[JournalOp]]
        /// The record count the newest commit states.
        var committedCount: UInt32
        /// Exactly one entry past the intact commit record when the other one is damaged: that is
        /// what a power cut tearing a commit record leaves (its entry was durable before), so that
        /// save is kept; with both commit records intact an uncommitted entry is the residue of an
        /// interrupted save and ignored. One, because a writer repairs a damaged commit record
        /// before it appends: only the entry whose commit was torn can lie past the intact one.
        var rolledForward: [[JournalOp]]
        var position: JournalPosition
    }

    /// Checks the layout and every MAC of a vault file. `corrupted` for a damaged layout or a
    /// file cut short of its last commit, `tampered` for anything that does not authenticate.
    static func read(_ bytes: [UInt8], header: VaultHeader, macKey: SecureBytes) throws(CredentialVaultError) -> Contents {
        guard bytes.count >= minimumSize else { throw .corrupted("truncated file") }
        return try bytes.withUnsafeBytes { raw in
            Result { () throws(CredentialVaultError) -> Contents in try read(raw, header: header, macKey: macKey) }
        }.get()
    }

    private static func read(_ raw: UnsafeRawBufferPointer, header: VaultHeader, macKey: SecureBytes) throws(CredentialVaultError) -> Contents {
        // Padding is zero: no byte of the file is left unchecked.
        let padding = [VaultHeader.size..<CommitRecord.offsets[0]] + CommitRecord.offsets.map { $0 + CommitRecord.size..<$0 + CommitRecord.blockSize }
        for range in padding where raw[range].contains(where: { $0 != 0 }) { throw .corrupted("damaged padding at byte \(range.lowerBound)") }
        let commits = CommitRecord.decodeBoth(raw, macKey: macKey)
        // The snapshot: `recordCount` records, then their MAC.
        let (ranges, tableLength) = try VaultFile.splitTable(
            UnsafeRawBufferPointer(rebasing: raw[CommitRecord.snapshotOffset...]), count: header.recordCount)
        let tableEnd = CommitRecord.snapshotOffset + tableLength
        let snapshotEnd = tableEnd + Crypto.macBytes
        guard snapshotEnd <= raw.count else { throw .corrupted("malformed record table") }
        let table = UnsafeRawBufferPointer(rebasing: raw[CommitRecord.snapshotOffset..<tableEnd])
        let storedMAC = Array(raw[tableEnd..<snapshotEnd])
        let snapshotMAC = VaultFile.tableMAC(
            header: UnsafeRawBufferPointer(rebasing: raw[..<VaultHeader.size]), table: table, macKey: macKey, recordRanges: ranges,
            label: snapshotLabel)
        guard constantTimeEquals(snapshotMAC, storedMAC) else { throw .tampered }
        let snapshot = VaultFile.records(in: table, at: ranges)

        // The newest intact commit record, and the journal up to it (`CommitRules`: every
        // state of the two records that no crash can leave is tampered).
        let snapshotState = CommitRecord(
            generation: header.generation, journalEnd: UInt64(snapshotEnd), recordCount: header.recordCount, chain: snapshotMAC)
        let choice = try CommitRules.choose(commits, snapshot: snapshotState)
        let newest = choice.newest
        guard newest.journalEnd >= UInt64(snapshotEnd), newest.journalEnd <= UInt64(raw.count) else {
            throw .corrupted("truncated file: the journal ends before its last commit")
        }
        let end = Int(newest.journalEnd)
        var position = JournalPosition(
            generation: header.generation, end: snapshotEnd, chain: snapshotMAC, newestSlot: choice.newestSlot,
            snapshotEnd: snapshotEnd, recordCount: Int(newest.recordCount), counter: newest.counter)
        let committed = try entries(
            UnsafeRawBufferPointer(rebasing: raw[..<end]), from: &position, macKey: macKey, strict: true, passing: choice.older)
        guard position.generation == newest.generation, constantTimeEquals(position.chain, newest.chain) else { throw .tampered }
        position.otherSlotDamaged = choice.otherDamaged
        var rolled: [[JournalOp]] = []
        if choice.otherDamaged {
            // A damaged record was torn while committing the entry after the intact one, which
            // was durable before: no complete entry there means no crash damaged the record.
            rolled = try entries(raw, from: &position, macKey: macKey, strict: false, atMost: 1)
            guard rolled.count == 1 else { throw .tampered }
            if header.hasRollbackCounter { position.counter.value &+= 1 }
        }
        // Past that, at most the residue of one interrupted append, and only with both records
        // intact (a writer repairs a damaged record before it appends). A complete entry more
        // is a committed one whose commit record was put back to an older one: an undo.
        var after = position
        let residue = try entries(raw, from: &after, macKey: macKey, strict: false, atMost: 2)
        guard residue.count <= (choice.otherDamaged ? 0 : 1) else { throw .tampered }
        return Contents(
            snapshot: snapshot, committed: committed, committedCount: newest.recordCount, rolledForward: rolled, position: position)
    }

    /// Reads the entries from `position.end` to the end of `raw` (`atMost` of them), advancing
    /// `position`. Strict: every byte must be a whole, authentic entry; else up to the first one
    /// that is not. `passing`: an older commit record the walk must pass exactly
    /// (`CommitRules.agrees`), else `tampered`.
    static func entries(
        _ raw: UnsafeRawBufferPointer, from position: inout JournalPosition, macKey: SecureBytes, strict: Bool,
        atMost limit: Int = .max, passing older: CommitRecord? = nil
    ) throws(CredentialVaultError) -> [[JournalOp]] {
        var found: [[JournalOp]] = []
        var passed = older == nil
        while true {
            if let older, position.generation == older.generation {
                guard CommitRules.agrees(position, with: older) else { throw .tampered }
                passed = true
            }
            guard position.end < raw.count && found.count < limit else { break }
            switch JournalEntry.read(raw, at: position.end, after: position.chain, macKey: macKey) {
            case .entry(let ops, let next, let chain):
                found.append(ops)
                position.end = next
                position.chain = chain
                position.generation &+= 1
                continue
            case .incomplete:
                if strict { throw .corrupted("a journal entry runs past the last commit") }
            case .broken:
                if strict { throw .tampered }
            case .malformed:
                if strict { throw .corrupted("malformed journal entry") }
            }
            break
        }
        guard passed else { throw .tampered }
        return found
    }
}
