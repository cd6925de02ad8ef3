/// The whole file: header, records, and a trailing MAC (formats 1.x and 2.x; see docs/FORMAT.md).
///
///     header (148 bytes) | record* | MAC (32 bytes)
///     record = length u32 | id (16) | nonce (24) | ciphertext | tag (16)
///     MAC 1.x = BLAKE2b-256 keyed with the file-MAC subkey over every byte before it
///     MAC 2.x = the same over the header and each record's length, id, nonce and tag only
///
/// The MAC is what makes dropping, reordering, duplicating or truncating records, and editing
/// the generation or count, detectable: each record only authenticates itself. Format 2 leaves
/// the ciphertext bodies out of the MAC because each one is already authenticated by its own
/// Poly1305 tag (bound to the vault id and record id) and every record is opened whenever the
/// file is read; binding (id, nonce, tag) binds the body, since another body with the same
/// nonce and tag would be a Poly1305 forgery. A save then hashes ~60 bytes per record instead of
/// the whole file (which made the MAC as costly as the durable write itself at 1,000 records).
enum VaultFile {
    /// The largest vault file read (a hostile file must not make us allocate without bound).
    static let maxSize = 1 << 30
    static let minRecordSize = SealedRecord.idSize + Crypto.sealOverhead

    /// Serialises header and records and appends the MAC. The output buffer is sized exactly
    /// up front and filled in place: every save rewrites the whole file, so growing a buffer
    /// (reallocating and copying it a dozen times for a large vault) or copying each record's
    /// entry out of the table would cost as much as the write itself.
    static func serialize(header: VaultHeader, records: Dictionary<CredentialKey, RecordEntry>.Values, macKey: SecureBytes) -> [UInt8] {
        var headerBytes = ByteWriter(capacity: VaultHeader.size)
        header.encode(into: &headerBytes)
        var bodySize = headerBytes.bytes.count
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
            for entry in records {
                withUnsafeBytes(of: UInt32(entry.sealed.id.count + entry.sealed.box.count).littleEndian, put)
                entry.sealed.id.withUnsafeBytes(put)
                entry.sealed.box.withUnsafeBytes(put)
            }
            precondition(offset == bodySize, "the vault's records changed while being serialised")
            let body = UnsafeRawBufferPointer(rebasing: out[..<bodySize])
            let mac = header.major == 1 ? Crypto.keyedHash(key: macKey, [body]) : tableMAC(body, macKey: macKey, recordRanges: nil)
            mac.withUnsafeBytes(put)
            initialized = total
        }
    }

    /// Parses the header only (the file is still locked).
    static func header(of bytes: [UInt8]) throws(CredentialVaultError) -> VaultHeader {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(CredentialVaultError) -> VaultHeader in
                var reader = ByteReader(raw)
                return try VaultHeader.decode(&reader)
            }
        }.get()
    }

    /// Checks the MAC and splits the records. `tampered` when the MAC fails, `corrupted` when
    /// the content does not parse. (Format 2 parses the table first: a damaged length is
    /// `corrupted`, any other change `tampered`.)
    static func records(of bytes: [UInt8], header: VaultHeader, macKey: SecureBytes) throws(CredentialVaultError) -> [SealedRecord] {
        guard bytes.count >= VaultHeader.size + Crypto.macBytes else { throw .corrupted("truncated file") }
        let bodyEnd = bytes.count - Crypto.macBytes
        return try bytes.withUnsafeBytes { raw in
            Result { () throws(CredentialVaultError) -> [SealedRecord] in
                let body = UnsafeRawBufferPointer(rebasing: raw[..<bodyEnd])
                let stored = Array(raw[bodyEnd...])
                if header.major == 1 {
                    guard constantTimeEquals(Crypto.keyedHash(key: macKey, [body]), stored) else { throw .tampered }
                }
                var reader = ByteReader(body, offset: VaultHeader.size)
                guard Int(header.recordCount) <= reader.remaining / (minRecordSize + 4) else {
                    throw .corrupted("record count exceeds the file size")
                }
                var records: [SealedRecord] = []
                var ranges: [Range<Int>] = []
                records.reserveCapacity(Int(header.recordCount))
                ranges.reserveCapacity(Int(header.recordCount))
                for _ in 0..<header.recordCount {
                    let start = reader.offset
                    guard let length = reader.u32(), Int(length) >= minRecordSize,
                        let id = reader.bytes(SealedRecord.idSize), let box = reader.bytes(Int(length) - SealedRecord.idSize)
                    else { throw .corrupted("malformed record table") }
                    records.append(SealedRecord(id: id, box: box))
                    ranges.append(start..<reader.offset)
                }
                guard reader.remaining == 0 else { throw .corrupted("trailing bytes after the records") }
                if header.major != 1 {
                    guard constantTimeEquals(tableMAC(body, macKey: macKey, recordRanges: ranges), stored) else { throw .tampered }
                }
                return records
            }
        }.get()
    }

    /// The format-2 MAC: the header, then each record's length, id and nonce (contiguous) and
    /// its tag (its last 16 bytes). `recordRanges` are the records' byte ranges in `body`; `nil`
    /// walks the table (the writer, whose table is well-formed by construction).
    static func tableMAC(_ body: UnsafeRawBufferPointer, macKey: SecureBytes, recordRanges: [Range<Int>]?) -> [UInt8] {
        var parts: [UnsafeRawBufferPointer] = []
        parts.reserveCapacity(2 + 2 * (recordRanges?.count ?? 64))
        let label = StaticString("CRDVAULT table MAC v2")
        parts.append(UnsafeRawBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount))
        parts.append(UnsafeRawBufferPointer(rebasing: body[..<VaultHeader.size]))
        let prefix = 4 + SealedRecord.idSize + Crypto.nonceBytes
        func add(_ range: Range<Int>) {
            parts.append(UnsafeRawBufferPointer(rebasing: body[range.lowerBound..<range.lowerBound + prefix]))
            parts.append(UnsafeRawBufferPointer(rebasing: body[range.upperBound - Crypto.tagBytes..<range.upperBound]))
        }
        if let recordRanges {
            recordRanges.forEach(add)
        } else {
            var offset = VaultHeader.size
            while offset < body.count {
                var length: UInt32 = 0
                withUnsafeMutableBytes(of: &length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: body[offset..<offset + 4])) }
                let end = offset + 4 + Int(UInt32(littleEndian: length))
                add(offset..<end)
                offset = end
            }
        }
        return Crypto.keyedHash(key: macKey, parts)
    }
}
