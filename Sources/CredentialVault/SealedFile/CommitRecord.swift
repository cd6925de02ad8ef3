/// A commit record of a format-3 vault: what the journal holds up to where (docs/FORMAT.md).
///
///     offset size field
///          0    8 generation (the header's snapshot generation + journal entries up to `journalEnd`)
///          8    8 journal end (file offset just after the last committed entry)
///         16    4 record count once the journal up to there is applied
///         20    4 reserved, zero
///         24   32 chain: the MAC chain value after the last committed entry
///         56   32 MAC = H(mac_key, "CRDVAULT commit v3" ‖ bytes 0..<56)
///
/// The file has two, each alone in a 4 KiB block (`offsets`), and a save overwrites the older
/// one in place after its journal entry is durable. Why two: a power cut while one is being
/// written can tear it (it then fails its MAC), and the other one still names a complete, older
/// state. Why each in its own block: a drive that tears a write damages at most the block being
/// written, never the header or the other commit record.
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

    private static func macLabel() -> UnsafeRawBufferPointer {
        let label = StaticString("CRDVAULT commit v3")
        return UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount)
    }

    /// The record with its MAC.
    func encoded(macKey: SecureBytes) -> [UInt8] {
        var w = ByteWriter(capacity: Self.size)
        w.u64(generation)
        w.u64(journalEnd)
        w.u32(recordCount)
        w.u32(0)
        w.raw(chain)
        let mac = w.bytes.withUnsafeBytes { Crypto.keyedHash(key: macKey, [Self.macLabel(), $0]) }
        w.raw(mac)
        return w.bytes
    }

    /// The record in `bytes` (exactly `size` of them), or `nil` when it fails its MAC (torn by a
    /// power cut, or damaged) or its reserved field is set.
    static func decode(_ bytes: UnsafeRawBufferPointer, macKey: SecureBytes) -> CommitRecord? {
        guard bytes.count == size else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<56])
        let expected = Crypto.keyedHash(key: macKey, [macLabel(), body])
        guard constantTimeEquals(expected, Array(bytes[56...])) else { return nil }
        var r = ByteReader(body)
        guard let generation = r.u64(), let end = r.u64(), let count = r.u32(), r.u32() == 0, let chain = r.bytes(Crypto.macBytes)
        else { return nil }
        return CommitRecord(generation: generation, journalEnd: end, recordCount: count, chain: chain)
    }
}
