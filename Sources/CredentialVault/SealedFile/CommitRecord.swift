/// A commit record of a journaled vault (formats 3.0 and 4.0): what the journal holds up to
/// where (docs/FORMAT.md).
///
///     offset size field
///          0    8 generation (the header's snapshot generation + journal entries up to `journalEnd`)
///          8    8 journal end (file offset just after the last committed entry)
///         16    4 record count once the journal up to there is applied
///         20    4 reserved, zero
///         24   32 chain: the MAC chain value after the last committed entry
///         56   32 MAC = H(mac_key, "CRDVAULT commit v3" ‖ bytes 0..<56)                 (3.0)
///                 MAC = H(mac_key, "CRDVAULT commit v4" ‖ slot:u8 ‖ bytes 0..<56)       (4.0)
///
/// The file has two, each alone in a 4 KiB block (`offsets`), and a save overwrites the older
/// one in place after its journal entry is durable. Why two: a power cut while one is being
/// written can tear it (it then fails its MAC), and the other one still names a complete, older
/// state. Why each in its own block: a drive that tears a write damages at most the block being
/// written, never the header or the other commit record. Why 4.0 binds the slot: without it,
/// copying the older record over the newer one (88 bytes, no key needed) gives two intact
/// records naming the older state, which a crash can also leave after a rewrite; with it, a
/// record moved to the other slot is damaged, and the rules in `CommitRules` apply.
struct CommitRecord: Equatable, Sendable {
    static let size = 88
    /// Where the two commit records live; the snapshot starts at `snapshotOffset`.
    static let offsets = [4096, 8192]
    static let blockSize = 4096
    static let snapshotOffset = 12288

    var generation: UInt64
    var journalEnd: UInt64
    var recordCount: UInt32
    var chain: [UInt8]

    /// Whether the MAC binds the slot: format 4.0 and later.
    static func bindsSlot(_ header: VaultHeader) -> Bool { header.major >= 4 }

    /// The MAC's input before the record's 56 bytes: the label, and in 4.0 the slot.
    private static func macPrefix(slot: Int?) -> [UInt8] {
        guard let slot else { return Array("CRDVAULT commit v3".utf8) }
        return Array("CRDVAULT commit v4".utf8) + [UInt8(slot)]
    }

    /// The record with its MAC, for `slot` (0 or 1) when the format binds it, else `nil`.
    func encoded(macKey: SecureBytes, slot: Int?) -> [UInt8] {
        var w = ByteWriter(capacity: Self.size)
        w.u64(generation)
        w.u64(journalEnd)
        w.u32(recordCount)
        w.u32(0)
        w.raw(chain)
        let prefix = Self.macPrefix(slot: slot)
        let mac = prefix.withUnsafeBytes { p in w.bytes.withUnsafeBytes { Crypto.keyedHash(key: macKey, [p, $0]) } }
        w.raw(mac)
        return w.bytes
    }

    /// The record in `bytes` (exactly `size` of them) read from `slot` (`nil` when the format
    /// does not bind it), or `nil` when it fails its MAC (torn by a power cut, damaged, or moved
    /// from the other slot) or its reserved field is set.
    static func decode(_ bytes: UnsafeRawBufferPointer, macKey: SecureBytes, slot: Int?) -> CommitRecord? {
        guard bytes.count == size else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<56])
        let expected = macPrefix(slot: slot).withUnsafeBytes { Crypto.keyedHash(key: macKey, [$0, body]) }
        guard constantTimeEquals(expected, Array(bytes[56...])) else { return nil }
        var r = ByteReader(body)
        guard let generation = r.u64(), let end = r.u64(), let count = r.u32(), r.u32() == 0, let chain = r.bytes(Crypto.macBytes)
        else { return nil }
        return CommitRecord(generation: generation, journalEnd: end, recordCount: count, chain: chain)
    }

    /// Both commit records of `file` (`nil` for a damaged one), decoded for `header`'s format.
    static func decodeBoth(_ file: UnsafeRawBufferPointer, header: VaultHeader, macKey: SecureBytes) -> [CommitRecord?] {
        offsets.enumerated().map { slot, offset in
            decode(UnsafeRawBufferPointer(rebasing: file[offset..<offset + size]), macKey: macKey, slot: bindsSlot(header) ? slot : nil)
        }
    }
}
