/// The whole file: header, records, and a trailing MAC (format 1.x; see docs/FORMAT.md).
///
///     header (148 bytes) | record* | MAC (32 bytes)
///     record = length u32 | id (16) | nonce (24) | ciphertext | tag (16)
///     MAC    = BLAKE2b-256 keyed with the file-MAC subkey over every byte before it
///
/// The MAC is what makes dropping, reordering, duplicating or truncating records, and editing
/// the generation or count, detectable: each record only authenticates itself.
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
            let mac = Crypto.keyedHash(key: macKey, [UnsafeRawBufferPointer(rebasing: out[..<bodySize])])
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

    /// Checks the MAC, then splits the records. `tampered` when the MAC fails, `corrupted` when
    /// the authenticated content does not parse.
    static func records(of bytes: [UInt8], header: VaultHeader, macKey: SecureBytes) throws(CredentialVaultError) -> [SealedRecord] {
        guard bytes.count >= VaultHeader.size + Crypto.macBytes else { throw .corrupted("truncated file") }
        let bodyEnd = bytes.count - Crypto.macBytes
        return try bytes.withUnsafeBytes { raw in
            Result { () throws(CredentialVaultError) -> [SealedRecord] in
                let body = UnsafeRawBufferPointer(rebasing: raw[..<bodyEnd])
                let expected = Crypto.keyedHash(key: macKey, [body])
                let stored = Array(raw[bodyEnd...])
                guard constantTimeEquals(expected, stored) else { throw .tampered }
                var reader = ByteReader(body, offset: VaultHeader.size)
                guard Int(header.recordCount) <= reader.remaining / (minRecordSize + 4) else {
                    throw .corrupted("record count exceeds the file size")
                }
                var records: [SealedRecord] = []
                records.reserveCapacity(Int(header.recordCount))
                for _ in 0..<header.recordCount {
                    guard let length = reader.u32(), Int(length) >= minRecordSize,
                        let id = reader.bytes(SealedRecord.idSize), let box = reader.bytes(Int(length) - SealedRecord.idSize)
                    else { throw .corrupted("malformed record table") }
                    records.append(SealedRecord(id: id, box: box))
                }
                guard reader.remaining == 0 else { throw .corrupted("trailing bytes after the records") }
                return records
            }
        }.get()
    }
}
