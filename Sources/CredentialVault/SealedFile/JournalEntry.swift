/// One change to a vault's records, as its journal stores it.
enum JournalOp: Sendable {
    /// A new record, or a new version of a key's record (the reader finds the key inside it).
    case put(SealedRecord)
    /// The record with this id is gone.
    case delete(recordID: [UInt8])
}

/// A journal entry: the changes of one write, chained to everything before it (docs/FORMAT.md).
///
///     entry = length:u32 ‖ body ‖ chain(32)
///     body  = op+ ;  op = 1 ‖ length:u32 ‖ record_id(16) ‖ box     (put, as in the snapshot)
///                       | 2 ‖ record_id(16)                          (delete)
///     chain = H(mac_key, "CRDVAULT journal" ‖ previous chain ‖ length:u32 ‖ body)
///
/// The first entry chains from the snapshot MAC, so the chain value after the last entry
/// authenticates header, snapshot and journal in order: dropping, reordering, replaying or
/// editing an entry changes it. The commit record stores it; checking one entry costs a hash of
/// that entry only, which is what keeps a save's cost independent of the vault's size.
enum JournalEntry {
    static let putOp: UInt8 = 1
    static let deleteOp: UInt8 = 2
    static let overhead = 4 + Crypto.macBytes

    private static func label() -> UnsafeRawBufferPointer {
        let label = StaticString("CRDVAULT journal")
        return UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount)
    }

    /// The chain value after an entry whose `length ‖ body` is `framed`.
    static func chain(after previous: [UInt8], framed: UnsafeRawBufferPointer, macKey: SecureBytes) -> [UInt8] {
        previous.withUnsafeBytes { Crypto.keyedHash(key: macKey, [label(), $0, framed]) }
    }

    /// The entry's bytes and the chain value after it.
    static func encode(_ ops: [JournalOp], after previous: [UInt8], macKey: SecureBytes) -> (bytes: [UInt8], chain: [UInt8]) {
        var w = ByteWriter()
        w.u32(0)  // the length, filled in below
        for op in ops {
            switch op {
            case .put(let record):
                w.u8(putOp)
                w.u32(UInt32(record.id.count + record.box.count))
                w.raw(record.id)
                w.raw(record.box)
            case .delete(let id):
                w.u8(deleteOp)
                w.raw(id)
            }
        }
        withUnsafeBytes(of: UInt32(w.bytes.count - 4).littleEndian) { w.bytes.replaceSubrange(0..<4, with: $0) }
        let chain = w.bytes.withUnsafeBytes { Self.chain(after: previous, framed: $0, macKey: macKey) }
        w.raw(chain)
        return (w.bytes, chain)
    }

    /// What reading one entry found.
    enum Read {
        /// A whole, authentic entry: its changes, the offset after it and the chain value.
        case entry([JournalOp], next: Int, chain: [UInt8])
        /// The bytes end inside the entry (or its length field is damaged).
        case incomplete
        /// The entry does not chain from `previous` (damaged, forged or out of order).
        case broken
        /// The entry authenticates but does not parse (only a faulty writer makes one).
        case malformed
    }

    /// Reads the entry at `offset` of `bytes`, which must end where the journal may end.
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int, after previous: [UInt8], macKey: SecureBytes) -> Read {
        var r = ByteReader(bytes, offset: offset)
        guard let length = r.u32(), length > 0, let body = r.take(Int(length)), let stored = r.bytes(Crypto.macBytes) else {
            return .incomplete
        }
        let framed = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 4 + Int(length)])
        let chain = chain(after: previous, framed: framed, macKey: macKey)
        guard constantTimeEquals(chain, stored) else { return .broken }
        guard let ops = parse(body) else { return .malformed }
        return .entry(ops, next: r.offset, chain: chain)
    }

    private static func parse(_ body: UnsafeRawBufferPointer) -> [JournalOp]? {
        var r = ByteReader(body)
        var ops: [JournalOp] = []
        while r.remaining > 0 {
            switch r.u8() {
            case putOp:
                guard let length = r.u32(), Int(length) >= VaultFile.minRecordSize, let id = r.bytes(SealedRecord.idSize),
                    let box = r.bytes(Int(length) - SealedRecord.idSize)
                else { return nil }
                ops.append(.put(SealedRecord(id: id, box: box)))
            case deleteOp:
                guard let id = r.bytes(SealedRecord.idSize) else { return nil }
                ops.append(.delete(recordID: id))
            default:
                return nil
            }
        }
        return ops
    }
}
