import Foundation

/// The decoded state of an unlocked vault: its header and its records by key.
struct VaultContents: Sendable {
    var header: VaultHeader
    var records: RecordTable

    /// Authenticates and decodes a file already known to carry `header`.
    static func decode(bytes: [UInt8], header: VaultHeader, keys: VaultKeys) throws(CredentialVaultError) -> VaultContents {
        let sealed = try VaultFile.records(of: bytes, header: header, macKey: keys.macKey)
        var records: [CredentialKey: RecordEntry] = [:]
        records.reserveCapacity(sealed.count)
        for record in sealed {
            let entry = try RecordCodec.openEntry(record, vaultID: header.vaultID, keys: keys)
            // The MAC covers the table, so a duplicate can only come from a faulty writer.
            guard records.updateValue(entry, forKey: entry.key) == nil else { throw .corrupted("duplicate record") }
        }
        return VaultContents(header: header, records: RecordTable(records))
    }

    /// The file bytes for this state.
    func encode(keys: VaultKeys) -> [UInt8] {
        var header = header
        header.recordCount = UInt32(records.count)
        return VaultFile.serialize(header: header, records: records.values, macKey: keys.macKey)
    }

    /// Removes expired ephemeral records; returns how many.
    mutating func purgeExpired(now: Date) -> Int {
        guard records.ephemeralCount > 0 else { return 0 }
        let expired = records.values.filter { $0.isExpired(at: now) }.map(\.key)
        for key in expired { records[key] = nil }
        return expired.count
    }
}
