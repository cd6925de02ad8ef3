import CredentialVault
import Foundation

/// The plaintext of one sealed row: the whole credential (names, label, options, dates and
/// value), so the database holds nothing about it in clear but its record id (a keyed hash),
/// its version and, for an ephemeral one, its expiry (a copy, for the purge; the sealed copy
/// is the one believed).
///
/// Layout (little-endian): format `1` (u8), flags (u8: bit 0 portable, bit 1 ephemeral),
/// created, modified and expiry in milliseconds since 1970 (i64 each; expiry 0 when
/// persistent), service, account (u16 length + UTF-8 each), label presence (u8) and label
/// (u16 length + UTF-8), value (u32 length + bytes).
struct FleetRecord: Sendable {
    var key: CredentialKey
    var accessibility: Accessibility
    var isEphemeral: Bool
    var created: Int64
    var modified: Int64
    var expires: Int64?
    var value: Data

    /// The largest value the store accepts (PostgreSQL's bytea limit is 1 GiB; 64 MiB keeps a
    /// row's round trip within the statement timeout).
    static let maxValueBytes = 64 << 20

    /// The encoded plaintext (the caller wipes it once sealed).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 64 + key.service.utf8.count + key.account.utf8.count + value.count)
        writer.u8(1)
        writer.u8((accessibility == .portable ? 1 : 0) | (isEphemeral ? 2 : 0))
        writer.u64(UInt64(bitPattern: created))
        writer.u64(UInt64(bitPattern: modified))
        writer.u64(UInt64(bitPattern: expires ?? 0))
        writer.string16(key.service)
        writer.string16(key.account)
        if let label = key.label {
            writer.u8(1)
            writer.string16(label)
        } else {
            writer.u8(0)
        }
        writer.u32(UInt32(value.count))
        value.withUnsafeBytes { writer.raw($0) }
        return writer.bytes
    }

    /// Decodes an opened row; `tampered` for anything malformed (an authenticated plaintext
    /// that does not parse was not written by this format).
    static func decode(_ plaintext: Data) throws(CredentialVaultError) -> FleetRecord {
        let record: FleetRecord? = plaintext.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            guard reader.u8() == 1, let flags = reader.u8(), flags & ~3 == 0, let created = reader.u64(), let modified = reader.u64(),
                let expires = reader.u64(), let service = reader.string16(), let account = reader.string16(), let hasLabel = reader.u8(),
                hasLabel <= 1
            else { return nil }
            var label: String?
            if hasLabel == 1 {
                guard let text = reader.string16() else { return nil }
                label = text
            }
            guard let count = reader.u32(), Int(count) == reader.remaining, let bytes = reader.take(Int(count)) else { return nil }
            let ephemeral = flags & 2 != 0
            return FleetRecord(
                key: CredentialKey(service: service, account: account, label: label),
                accessibility: flags & 1 != 0 ? .portable : .deviceOnly, isEphemeral: ephemeral, created: Int64(bitPattern: created),
                modified: Int64(bitPattern: modified), expires: ephemeral ? Int64(bitPattern: expires) : nil, value: Data(bytes))
        }
        guard let record else { throw .tampered }
        return record
    }

    /// The metadata of this record.
    var metadata: CredentialMetadata {
        CredentialMetadata(
            key: key, accessibility: accessibility, isEphemeral: isEphemeral, created: Self.date(created),
            modified: Self.date(modified), expiresAt: expires.map(Self.date))
    }

    /// Milliseconds since 1970 of `date`, to the nearest (a date made of whole milliseconds,
    /// as every store makes them, is a hair below or above its millisecond in a `Double`: its
    /// millisecond comes back), clamped to ±292 million years (no trap on any clock).
    static func milliseconds(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        guard ms.isFinite else { return 0 }
        return Int64(max(-9.2e18, min(9.2e18, ms)))
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}
