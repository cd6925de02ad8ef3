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
///                 MAC = H(mac_key, "CRDVAULT commit v4" ‖ slot:u8 ‖ bytes 0..<56)       (4.0, 5.0)
///
/// In 6.0 the record is 96 bytes: the reserved field names the rollback counter (the
/// custodian's reference, 0 without a counter), a counter value follows, and the MAC moves:
///
///         20    4 counter reference
///         24    8 counter value (what the custodian's counter reads once this state is durable)
///         32   32 chain
///         64   32 MAC = H(mac_key, "CRDVAULT commit v6" ‖ slot:u8 ‖ bytes 0..<64)
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
    /// The size in formats 3.0 to 5.0.
    static let size = 88
    /// The size in format 6.0.
    static let counterSize = 96
    /// Where the two commit records live; the snapshot starts at `snapshotOffset`.
    static let offsets = [4096, 8192]
    static let blockSize = 4096
    static let snapshotOffset = 12288

    var generation: UInt64
    var journalEnd: UInt64
    var recordCount: UInt32
    var chain: [UInt8]
    /// The rollback counter this state carries (format 6.0; zero before).
    var counter = RollbackStamp()

    /// Whether the MAC binds the slot: format 4.0 and later.
    static func bindsSlot(_ header: VaultHeader) -> Bool { header.major >= 4 }

    /// Whether the record carries a counter: format 6.0.
    static func carriesCounter(_ major: UInt16) -> Bool { major >= VaultHeader.custodyMajor }

    /// The size of a record in a file of `header`'s format.
    static func size(_ header: VaultHeader) -> Int { carriesCounter(header.major) ? counterSize : size }

    /// The MAC's input before the record's body: the label, and from 4.0 on the slot.
    private static func macPrefix(slot: Int?, major: UInt16) -> [UInt8] {
        guard let slot else { return Array("CRDVAULT commit v3".utf8) }
        return Array((carriesCounter(major) ? "CRDVAULT commit v6" : "CRDVAULT commit v4").utf8) + [UInt8(slot)]
    }

    /// The record with its MAC, for `slot` (0 or 1) when the format binds it, else `nil`.
    func encoded(macKey: SecureBytes, slot: Int?, major: UInt16 = VaultHeader.currentMajor) -> [UInt8] {
        let withCounter = Self.carriesCounter(major)
        var w = ByteWriter(capacity: withCounter ? Self.counterSize : Self.size)
        w.u64(generation)
        w.u64(journalEnd)
        w.u32(recordCount)
        w.u32(withCounter ? counter.reference : 0)
        if withCounter { w.u64(counter.value) }
        w.raw(chain)
        let prefix = Self.macPrefix(slot: slot, major: major)
        let mac = prefix.withUnsafeBytes { p in w.bytes.withUnsafeBytes { Crypto.keyedHash(key: macKey, [p, $0]) } }
        w.raw(mac)
        return w.bytes
    }

    /// The record in `bytes` (exactly `size` of them) read from `slot` (`nil` when the format
    /// does not bind it), or `nil` when it fails its MAC (torn by a power cut, damaged, or moved
    /// from the other slot) or its reserved field is set.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, macKey: SecureBytes, slot: Int?, major: UInt16 = VaultHeader.currentMajor
    ) -> CommitRecord? {
        let withCounter = carriesCounter(major)
        let size = withCounter ? counterSize : size
        guard bytes.count == size else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<(size - Crypto.macBytes)])
        let expected = macPrefix(slot: slot, major: major).withUnsafeBytes { Crypto.keyedHash(key: macKey, [$0, body]) }
        guard constantTimeEquals(expected, Array(bytes[(size - Crypto.macBytes)...])) else { return nil }
        var r = ByteReader(body)
        guard let generation = r.u64(), let end = r.u64(), let count = r.u32(), let reference = r.u32() else { return nil }
        var counter = RollbackStamp()
        if withCounter {
            guard let value = r.u64() else { return nil }
            counter = RollbackStamp(reference: reference, value: value)
        } else if reference != 0 {
            return nil
        }
        guard let chain = r.bytes(Crypto.macBytes) else { return nil }
        return CommitRecord(generation: generation, journalEnd: end, recordCount: count, chain: chain, counter: counter)
    }

    /// Both commit records of `file` (`nil` for a damaged one), decoded for `header`'s format.
    static func decodeBoth(_ file: UnsafeRawBufferPointer, header: VaultHeader, macKey: SecureBytes) -> [CommitRecord?] {
        offsets.enumerated().map { slot, offset in
            decode(
                UnsafeRawBufferPointer(rebasing: file[offset..<offset + size(header)]), macKey: macKey,
                slot: bindsSlot(header) ? slot : nil, major: header.major)
        }
    }
}

/// The rollback counter a commit record carries: the custodian's reference and the value its
/// counter has once that state is durable (zero for a vault without a counter).
struct RollbackStamp: Equatable, Sendable {
    var reference: UInt32 = 0
    var value: UInt64 = 0
}
