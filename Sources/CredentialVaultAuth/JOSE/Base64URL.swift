import Foundation

/// Unpadded base64url (RFC 4648 section 5) as JOSE uses it (RFC 7515 section 2).
///
/// Decoding is strict, which keeps every byte string to exactly one encoding:
/// - only `A-Z a-z 0-9 - _` are accepted: no padding, whitespace, `+` or `/`;
/// - a length of 4k+1 characters is rejected (it cannot encode whole bytes);
/// - the unused low bits of the last character must be zero (a non-canonical encoding
///   such as `QR` for the single byte 0x41 is rejected), so a signature cannot be
///   re-encoded into a different-looking but equivalent token.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xFF marks bytes outside the alphabet.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes `data` as unpadded base64url.
    public static func encode<Bytes: Sequence>(_ data: Bytes) -> String where Bytes.Element == UInt8 {
        let bytes = Array(data)
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
            out.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let chunk = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
        case 2:
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strict unpadded base64url text.
    /// - Throws: `JOSEError.invalidBase64URL` for any character outside the alphabet,
    ///   padding, an impossible length or non-zero trailing bits.
    public static func decode(_ text: String) throws(JOSEError) -> Data {
        try decode(bytes: Array(text.utf8)[...])
    }

    /// Decodes strict unpadded base64url from ASCII bytes (see `decode(_:)`).
    public static func decode(_ bytes: Data) throws(JOSEError) -> Data {
        try decode(bytes: Array(bytes)[...])
    }

    /// Decodes a slice of ASCII bytes; the workhorse behind both public entry points.
    static func decode(bytes: ArraySlice<UInt8>) throws(JOSEError) -> Data {
        let remainder = bytes.count % 4
        guard remainder != 1 else { throw .invalidBase64URL }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            let value = decodeTable[Int(byte)]
            guard value != 0xFF else { throw .invalidBase64URL }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero: otherwise the encoding is not canonical.
        guard accumulator == 0 else { throw .invalidBase64URL }
        return Data(out)
    }
}
