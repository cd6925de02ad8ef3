#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The decoded state of an unlocked vault: its header, its records by key, and where its
/// journal stands.
struct VaultContents: Sendable {
    var header: VaultHeader
    var records: RecordTable
    var journal: JournalPosition

    /// Authenticates and decodes a file already known to carry `header`.
    static func decode(bytes: [UInt8], header: VaultHeader, keys: VaultKeys) throws(CredentialVaultError) -> VaultContents {
        let file = try JournaledFile.read(bytes, header: header, macKey: keys.macKey)
        var contents = VaultContents(
            header: header, records: try table(of: file.snapshot, header: header, keys: keys), journal: file.position)
        try contents.apply(file.committed, keys: keys)
        guard contents.records.count == Int(file.committedCount) else { throw .corrupted("the record count does not match the journal") }
        try contents.apply(file.rolledForward, keys: keys)
        contents.journal.recordCount = contents.records.count
        return contents
    }

    /// Opens every record of a snapshot (names and flags; values stay sealed).
    private static func table(of sealed: [SealedRecord], header: VaultHeader, keys: VaultKeys) throws(CredentialVaultError) -> RecordTable {
        var records: [CredentialKey: RecordEntry] = [:]
        var ids: Set<RecordID> = []
        records.reserveCapacity(sealed.count)
        ids.reserveCapacity(sealed.count)
        for record in sealed {
            let entry = try RecordCodec.openEntry(record, vaultID: header.vaultID, keys: keys)
            // The MAC covers the table, so a duplicate can only come from a faulty writer.
            guard records.updateValue(entry, forKey: entry.key) == nil, ids.insert(RecordID(record.id)).inserted else {
                throw .corrupted("duplicate record")
            }
        }
        return RecordTable(records)
    }

    /// Applies journal entries, all or nothing: a record that does not open, a delete of a
    /// record the vault does not hold, or a result without `expectedCount` records (when given)
    /// leaves the records as they were.
    mutating func apply(_ entries: [[JournalOp]], keys: VaultKeys, expectedCount: Int? = nil) throws(CredentialVaultError) {
        guard !entries.isEmpty else { return }
        records.beginChanges()
        do throws(CredentialVaultError) {
            for ops in entries {
                for op in ops {
                    switch op {
                    case .put(let sealed):
                        let entry = try RecordCodec.openEntry(sealed, vaultID: header.vaultID, keys: keys)
                        if let holder = records.key(forRecordID: sealed.id), holder != entry.key {
                            throw .corrupted("the journal reuses the id of another record")
                        }
                        records[entry.key] = entry
                    case .delete(let id):
                        guard let key = records.key(forRecordID: id) else {
                            throw .corrupted("the journal deletes a record the vault does not hold")
                        }
                        records[key] = nil
                    }
                }
            }
            if let expectedCount, records.count != expectedCount {
                throw .corrupted("the record count does not match the journal")
            }
            records.commit()
        } catch {
            records.rollBack()
            throw error
        }
    }

    /// The journal entry's changes for what changed in `records` since `beginChanges()`.
    func pendingOps() -> [JournalOp] {
        records.pendingChanges.map { before, after in
            if let after { .put(after.sealed) } else { .delete(recordID: before!.sealed.id) }
        }
    }

    /// Removes expired ephemeral records; returns how many.
    mutating func purgeExpired(now: Date) -> Int {
        guard records.ephemeralCount > 0 else { return 0 }
        let expired = records.values.filter { $0.isExpired(at: now) }.map(\.key)
        for key in expired { records[key] = nil }
        return expired.count
    }
}
