/// A commit record of the vault file: what the journal holds up to where, and the rollback
/// counter of that state (docs/FORMAT.md, *Commit records*).
///
///     offset size field
///          0    8 generation (the header's snapshot generation + journal entries up to `journalEnd`)
///          8    8 journal end (file offset just after the last committed entry)
///         16    4 record count once the journal up to there is applied
///         20    4 counter reference (the custodian's name for the counter; 0 without one)
///         24    8 counter value (what the custodian's counter reads once this state is durable)
///         32   32 chain: the MAC chain value after the last committed entry
///         64   32 MAC = H(mac_key, "CRDVAULT commit" ‖ slot:u8 ‖ bytes 0..<64)
///
/// The file has two, each alone in a 4 KiB block (`offsets`), and a save overwrites the older
/// one in place after its journal entry is durable. Why two: a power cut while one is being
/// written can tear it (it then fails its MAC), and the other one still names a complete, older
/// state. Why each in its own block: a drive that tears a write damages at most the block being
/// written, never the header or the other commit record. Why the MAC binds the slot: without
/// it, copying the older record over the newer one (no key needed) gives two intact records
/// naming the older state, which a crash can also leave after a rewrite; with it, a record
/// moved to the other slot is damaged, and the rules in `CommitRules` apply. The counter fields
/// are always there (zero without a counter), so a vault that gets or drops a counter keeps
/// its layout.
struct CommitRecord: Equatable, Sendable {
    static let size = 96
    /// Where the two commit records live; the snapshot starts at `snapshotOffset`.
    static let offsets = [4096, 8192]
    static let blockSize = 4096
    static let snapshotOffset = 12288
    /// The MAC's label; the slot (0 or 1) follows it.
    private static let macLabel: StaticString = "CRDVAULT commit"

    var generation: UInt64
    var journalEnd: UInt64
    var recordCount: UInt32
    var chain: [UInt8]
    /// The rollback counter this state carries (zero without a counter).
    var counter = RollbackStamp()

    /// The MAC's input before the record's body: the label and the slot.
    private static func macPrefix(slot: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: macLabel.utf8Start, count: macLabel.utf8CodeUnitCount)) + [UInt8(slot)]
    }

    /// The record with its MAC, for `slot` (0 or 1).
    func encoded(macKey: SecureBytes, slot: Int) -> [UInt8] {
        var w = ByteWriter(capacity: Self.size)
        w.u64(generation)
        w.u64(journalEnd)
        w.u32(recordCount)
        w.u32(counter.reference)
        w.u64(counter.value)
        w.raw(chain)
        let prefix = Self.macPrefix(slot: slot)
        let mac = prefix.withUnsafeBytes { p in w.bytes.withUnsafeBytes { Crypto.keyedHash(key: macKey, [p, $0]) } }
        w.raw(mac)
        return w.bytes
    }

    /// The record in `bytes` (exactly `size` of them) read from `slot`, or `nil` when it fails
    /// its MAC (torn by a power cut, damaged, or moved from the other slot).
    static func decode(_ bytes: UnsafeRawBufferPointer, macKey: SecureBytes, slot: Int) -> CommitRecord? {
        guard bytes.count == size else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<(size - Crypto.macBytes)])
        let expected = macPrefix(slot: slot).withUnsafeBytes { Crypto.keyedHash(key: macKey, [$0, body]) }
        guard constantTimeEquals(expected, Array(bytes[(size - Crypto.macBytes)...])) else { return nil }
        var r = ByteReader(body)
        guard let generation = r.u64(), let end = r.u64(), let count = r.u32(), let reference = r.u32(), let value = r.u64(),
            let chain = r.bytes(Crypto.macBytes)
        else { return nil }
        return CommitRecord(
            generation: generation, journalEnd: end, recordCount: count, chain: chain,
            counter: RollbackStamp(reference: reference, value: value))
    }

    /// Both commit records of `file` (`nil` for a damaged one).
    static func decodeBoth(_ file: UnsafeRawBufferPointer, macKey: SecureBytes) -> [CommitRecord?] {
        offsets.enumerated().map { slot, offset in
            decode(UnsafeRawBufferPointer(rebasing: file[offset..<offset + size]), macKey: macKey, slot: slot)
        }
    }
}

/// The rollback counter a commit record carries: the custodian's reference and the value its
/// counter has once that state is durable (zero for a vault without a counter).
struct RollbackStamp: Equatable, Sendable {
    var reference: UInt32 = 0
    var value: UInt64 = 0
}
