#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One record as stored: a random id and the sealed record (nonce, ciphertext, tag).
struct SealedRecord: Sendable, Equatable {
    static let idSize = 16
    var id: [UInt8]
    var box: [UInt8]
}

/// What the vault keeps in memory about a record: its names and flags in clear (decrypted once
/// when the file is read), the value still sealed until someone loads it.
struct RecordEntry: Sendable {
    var key: CredentialKey
    var accessibility: Accessibility
    /// Unix time in milliseconds after which an ephemeral record is gone; 0 for persistent.
    var expiresAtMillis: UInt64
    var sealed: SealedRecord
    /// When the key was created and the record written.
    var times: RecordTimes

    var isEphemeral: Bool { expiresAtMillis != 0 }

    func isExpired(at now: Date) -> Bool {
        isEphemeral && Double(expiresAtMillis) <= now.timeIntervalSince1970 * 1000
    }

    /// What `metadata(for:)` reports about this record.
    var metadata: CredentialMetadata {
        CredentialMetadata(
            key: key, accessibility: accessibility, isEphemeral: isEphemeral, created: times.created,
            modified: times.modified, expiresAt: isEphemeral ? RecordTimes.date(expiresAtMillis) : nil)
    }
}

/// Sealing and opening records (docs/FORMAT.md, *Records*).
///
/// Record plaintext: flags u8 (1 device-only, 2 ephemeral, 4 has label), expiry u64 (Unix ms,
/// 0 = persistent), created u64 (Unix ms, 0 = unknown), modified u64 (Unix ms), service,
/// account, label (u16 length + UTF-8 each; label only with flag 4), value (u32 length +
/// bytes), then zeros up to a multiple of 64 bytes, so that the file shows record sizes only
/// to 64 bytes. For a
/// device-only record the value bytes are themselves sealed with the device record key. The
/// associated data binds the record format, the vault id and the record id, so a record cannot
/// be moved to another vault or pass for another record.
enum RecordCodec {
    /// The record format, bound into every record's associated data: a record could only be
    /// read as another layout's by a reader that also binds that layout's number.
    static let recordFormat: UInt16 = 1
    private static let flagDeviceOnly: UInt8 = 1
    private static let flagEphemeral: UInt8 = 2
    private static let flagLabel: UInt8 = 4
    /// Any other flag bit is `corrupted`: only a writer with the key can set one.
    private static let knownFlags = flagDeviceOnly | flagEphemeral | flagLabel
    /// Plaintexts are padded with zeros to a multiple of this: an observer without the key
    /// learns a record's size in these steps, not names and value lengths exactly.
    static let paddingBlock = 64

    /// Zeros appended to `plain` up to a multiple of `paddingBlock`.
    private static func pad(_ plain: inout [UInt8]) {
        let over = plain.count % paddingBlock
        if over != 0 { plain.append(contentsOf: repeatElement(0, count: paddingBlock - over)) }
    }

    static func outerAD(vaultID: [UInt8], recordID: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 40)
        w.raw(Array("CVREC".utf8))
        w.u16(recordFormat)
        w.raw(vaultID)
        w.raw(recordID)
        return w.bytes
    }

    static func deviceAD(vaultID: [UInt8], recordID: [UInt8]) -> [UInt8] {
        Array("CVDEV".utf8) + vaultID + recordID
    }

    /// Seals a new record with a fresh random id.
    static func seal(
        key: CredentialKey, value: Data, accessibility: Accessibility, expiresAtMillis: UInt64,
        vaultID: [UInt8], keys: VaultKeys, deviceKey: SecureBytes?, times: RecordTimes
    ) -> RecordEntry {
        let id = Crypto.randomBytes(SealedRecord.idSize)
        // Room for everything, padding included, from the start: a buffer that grew would be
        // reallocated, leaving a copy of the plaintext in freed memory that `wipe` never sees.
        // Fixed fields (flags, expiry, times, four lengths) 35 bytes, the device seal's nonce and
        // tag 40, padding at most 63.
        let names = key.service.utf8.count + key.account.utf8.count + (key.label?.utf8.count ?? 0)
        var plain = ByteWriter(capacity: value.count + names + 35 + 40 + paddingBlock)
        let reserved = plain.bytes.capacity
        var flags: UInt8 = 0
        if accessibility == .deviceOnly { flags |= flagDeviceOnly }
        if expiresAtMillis != 0 { flags |= flagEphemeral }
        if key.label != nil { flags |= flagLabel }
        plain.u8(flags)
        plain.u64(expiresAtMillis)
        plain.u64(times.createdMillis ?? 0)
        plain.u64(times.modifiedMillis)
        plain.string16(key.service)
        plain.string16(key.account)
        if let label = key.label { plain.string16(label) }
        if let deviceKey {
            var inner: [UInt8] = []
            value.withUnsafeBytes { Crypto.seal($0, key: deviceKey, associatedData: deviceAD(vaultID: vaultID, recordID: id), into: &inner) }
            plain.u32(UInt32(inner.count))
            plain.raw(inner)
        } else {
            plain.u32(UInt32(value.count))
            value.withUnsafeBytes { plain.raw($0) }
        }
        defer { wipe(&plain.bytes) }
        pad(&plain.bytes)
        assert(plain.bytes.capacity == reserved, "the record plaintext was reallocated")
        let box = Crypto.seal(plain.bytes, key: keys.recordKey, associatedData: outerAD(vaultID: vaultID, recordID: id))
        return RecordEntry(
            key: key, accessibility: accessibility, expiresAtMillis: expiresAtMillis, sealed: SealedRecord(id: id, box: box),
            times: times)
    }

    /// Opens a record and returns its names and flags (the value is wiped). `tampered` when it
    /// does not authenticate, `corrupted` when it authenticates but does not parse.
    static func openEntry(_ sealed: SealedRecord, vaultID: [UInt8], keys: VaultKeys) throws(CredentialVaultError) -> RecordEntry {
        try withPlaintext(sealed, vaultID: vaultID, keys: keys) { (fields) throws(CredentialVaultError) in
            RecordEntry(
                key: fields.key, accessibility: fields.accessibility, expiresAtMillis: fields.expiry, sealed: sealed, times: fields.times)
        }
    }

    /// Opens a record's value. `deviceMismatch` when a device-only value was sealed on another
    /// machine (`deviceKey` is this machine's key for this vault).
    static func openValue(
        _ sealed: SealedRecord, vaultID: [UInt8], keys: VaultKeys, deviceKey: () throws(CredentialVaultError) -> SecureBytes
    ) throws(CredentialVaultError) -> Data {
        try withPlaintext(sealed, vaultID: vaultID, keys: keys) { (fields) throws(CredentialVaultError) -> Data in
            guard fields.accessibility == .deviceOnly else { return Data(fields.value) }
            var inner: [UInt8] = []
            defer { wipe(&inner) }
            let ok = Crypto.open(
                fields.value, key: try deviceKey(), associatedData: deviceAD(vaultID: vaultID, recordID: sealed.id), into: &inner)
            guard ok else { throw .deviceMismatch }
            return Data(inner)
        }
    }

    /// Re-seals a record under new keys (rotation). The id stays, so a device-only value, bound to the id and the vault id, stays valid without
    /// the device key being needed.
    static func reseal(_ sealed: SealedRecord, vaultID: [UInt8], from old: VaultKeys, to new: VaultKeys) throws(CredentialVaultError) -> SealedRecord {
        var plain: [UInt8] = []
        defer { wipe(&plain) }
        let ad = outerAD(vaultID: vaultID, recordID: sealed.id)
        guard sealed.box.withUnsafeBytes({ Crypto.open($0, key: old.recordKey, associatedData: ad, into: &plain) }) else {
            throw .tampered
        }
        return SealedRecord(id: sealed.id, box: Crypto.seal(plain, key: new.recordKey, associatedData: ad))
    }

    private struct Fields {
        var key: CredentialKey
        var accessibility: Accessibility
        var expiry: UInt64
        var times: RecordTimes
        var value: UnsafeRawBufferPointer
    }

    private static func withPlaintext<R>(
        _ sealed: SealedRecord, vaultID: [UInt8], keys: VaultKeys, _ body: (Fields) throws(CredentialVaultError) -> R
    ) throws(CredentialVaultError) -> R {
        var plain: [UInt8] = []
        defer { wipe(&plain) }
        let ad = outerAD(vaultID: vaultID, recordID: sealed.id)
        guard sealed.box.withUnsafeBytes({ Crypto.open($0, key: keys.recordKey, associatedData: ad, into: &plain) }) else {
            throw .tampered
        }
        // Array.withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        return try plain.withUnsafeBytes { raw in
            Result { () throws(CredentialVaultError) -> R in
                var r = ByteReader(raw)
                guard let flags = r.u8(), let expiry = r.u64(), let created = r.u64(), let modified = r.u64() else {
                    throw .corrupted("malformed record")
                }
                let times = RecordTimes(createdMillis: created == 0 ? nil : created, modifiedMillis: modified)
                guard let service = r.string16(), let account = r.string16() else { throw .corrupted("malformed record") }
                var label: String?
                if flags & flagLabel != 0 {
                    guard let l = r.string16() else { throw .corrupted("malformed record label") }
                    label = l
                }
                guard flags & ~knownFlags == 0,
                    (flags & flagEphemeral != 0) == (expiry != 0),
                    let length = r.u32(), let value = r.take(Int(length)), r.remaining < paddingBlock, raw.count % paddingBlock == 0,
                    let padding = r.take(r.remaining), !padding.contains(where: { $0 != 0 })
                else { throw .corrupted("malformed record") }
                let key = CredentialKey(service: service, account: account, label: label)
                // The names every save checks (non-empty service, no NUL, 4096 bytes each): a
                // record that breaks them could be listed but never loaded, saved over or
                // deleted by its name.
                do { try key.validate() } catch { throw .corrupted("a record's name breaks the name rules") }
                let fields = Fields(
                    key: key,
                    accessibility: flags & flagDeviceOnly != 0 ? .deviceOnly : .portable, expiry: expiry, times: times,
                    value: value)
                return try body(fields)
            }
        }.get()
    }
}
