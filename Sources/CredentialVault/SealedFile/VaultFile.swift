/// The record table of the vault file's snapshot (`JournaledFile`) and the checks made on a
/// file before any key derivation.
///
///     record = length u32 | id (16) | nonce (24) | ciphertext | tag (16)
///
/// The snapshot MAC (`tableMAC`) binds the header and each record's length, id, nonce and tag,
/// not the ciphertext bodies: each body is already authenticated by its own Poly1305 tag (bound
/// to the vault id and record id) and every record is opened whenever the file is read, so
/// binding (id, nonce, tag) binds the body, since another body with the same nonce and tag
/// would be a Poly1305 forgery. A rewrite then hashes ~60 bytes per record instead of the whole
/// file.
enum VaultFile {
    /// The largest vault file read (a hostile file must not make us allocate without bound).
    static let maxSize = 1 << 30
    /// An id and a box sealing at least one padding block: a record plaintext is a nonzero
    /// multiple of 64 bytes (its fixed fields alone take 33).
    static let minRecordSize = SealedRecord.idSize + Crypto.sealOverhead + RecordCodec.paddingBlock

    /// `header ‖ zeros up to tableOffset ‖ records ‖ mac(header, table)`. The output buffer is
    /// sized exactly up front and filled in place: a whole-file write of a large vault must not
    /// also grow a buffer (reallocating and copying it a dozen times) or copy each record's
    /// entry out of the table, which would cost as much as the write itself.
    static func layOut(
        header: VaultHeader, records: Dictionary<CredentialKey, RecordEntry>.Values, tableOffset: Int,
        mac: (_ header: UnsafeRawBufferPointer, _ table: UnsafeRawBufferPointer) -> [UInt8]
    ) -> [UInt8] {
        var headerBytes = ByteWriter(capacity: VaultHeader.size)
        header.encode(into: &headerBytes)
        var bodySize = tableOffset
        for entry in records { bodySize += 4 + entry.sealed.id.count + entry.sealed.box.count }
        let total = bodySize + Crypto.macBytes
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            func put(_ bytes: UnsafeRawBufferPointer) {
                if bytes.count > 0 { out.baseAddress!.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                offset += bytes.count
            }
            headerBytes.bytes.withUnsafeBytes(put)
            out.baseAddress!.advanced(by: offset).initializeMemory(as: UInt8.self, repeating: 0, count: tableOffset - offset)
            offset = tableOffset
            for entry in records {
                withUnsafeBytes(of: UInt32(entry.sealed.id.count + entry.sealed.box.count).littleEndian, put)
                entry.sealed.id.withUnsafeBytes(put)
                entry.sealed.box.withUnsafeBytes(put)
            }
            precondition(offset == bodySize, "the vault's records changed while being serialised")
            let headerPart = UnsafeRawBufferPointer(rebasing: out[..<VaultHeader.size])
            let table = UnsafeRawBufferPointer(rebasing: out[tableOffset..<bodySize])
            mac(headerPart, table).withUnsafeBytes(put)
            initialized = total
        }
    }

    /// Parses the header only (the file is still locked), and refuses a file too short to be a
    /// vault before any key derivation is run for it.
    static func header(of bytes: [UInt8]) throws(CredentialVaultError) -> VaultHeader {
        let header = try VaultHeader.decode(bytes: bytes)
        guard bytes.count >= JournaledFile.minimumSize else { throw .corrupted("truncated file") }
        return header
    }

    /// Frames the `count` records at the start of `table`: each record's byte range in `table`,
    /// and where the last one ends (what follows is the caller's). `corrupted` when they do not
    /// frame. Nothing is copied: the count is not authenticated until the snapshot MAC is
    /// checked over these ranges, and a hostile count must not make the reader allocate a copy
    /// of every "record" (several times the file's size) before that check fails.
    static func splitTable(
        _ table: UnsafeRawBufferPointer, count: UInt32
    ) throws(CredentialVaultError) -> (ranges: [Range<Int>], end: Int) {
        var reader = ByteReader(table)
        guard Int(count) <= reader.remaining / (minRecordSize + 4) else {
            throw .corrupted("record count exceeds the file size")
        }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(Int(count))
        for _ in 0..<count {
            let start = reader.offset
            guard let length = reader.u32(), Int(length) >= minRecordSize, reader.take(Int(length)) != nil else {
                throw .corrupted("malformed record table")
            }
            ranges.append(start..<reader.offset)
        }
        return (ranges, reader.offset)
    }

    /// The records `splitTable` framed in `table`, copied out (once the table is authenticated).
    static func records(in table: UnsafeRawBufferPointer, at ranges: [Range<Int>]) -> [SealedRecord] {
        ranges.map { range in
            let id = range.lowerBound + 4
            return SealedRecord(id: Array(table[id..<id + SealedRecord.idSize]), box: Array(table[id + SealedRecord.idSize..<range.upperBound]))
        }
    }

    /// The snapshot MAC: a label, the header, then each record's length, id and
    /// nonce (contiguous) and its tag (its last 16 bytes). `recordRanges` are the records' byte
    /// ranges in `table`; `nil` walks the table (the writer, whose table is well-formed by
    /// construction).
    static func tableMAC(
        header: UnsafeRawBufferPointer, table: UnsafeRawBufferPointer, macKey: SecureBytes, recordRanges: [Range<Int>]?,
        label: StaticString
    ) -> [UInt8] {
        var parts: [UnsafeRawBufferPointer] = []
        parts.reserveCapacity(2 + 2 * (recordRanges?.count ?? 64))
        parts.append(UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount))
        parts.append(header)
        let prefix = 4 + SealedRecord.idSize + Crypto.nonceBytes
        func add(_ range: Range<Int>) {
            parts.append(UnsafeRawBufferPointer(rebasing: table[range.lowerBound..<range.lowerBound + prefix]))
            parts.append(UnsafeRawBufferPointer(rebasing: table[range.upperBound - Crypto.tagBytes..<range.upperBound]))
        }
        if let recordRanges {
            recordRanges.forEach(add)
        } else {
            var offset = 0
            while offset < table.count {
                var length: UInt32 = 0
                withUnsafeMutableBytes(of: &length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: table[offset..<offset + 4])) }
                let end = offset + 4 + Int(UInt32(littleEndian: length))
                add(offset..<end)
                offset = end
            }
        }
        return Crypto.keyedHash(key: macKey, parts)
    }
}
