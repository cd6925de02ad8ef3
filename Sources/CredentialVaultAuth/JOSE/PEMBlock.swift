import CredentialVault

/// The first PEM block (RFC 7468) of a text, decoded by this module rather than OpenSSL: its
/// bytes go straight from the caller's buffer into guarded memory, whereas OpenSSL's PEM and
/// DER decoders leave the private values they pass through in freed heap blocks uncleared.
struct PEMBlock {
    /// The label between `-----BEGIN ` and `-----` (for example `PRIVATE KEY`).
    let label: String
    /// The decoded body (DER), in guarded memory.
    let der: SecureBytes

    /// The largest PEM body decoded (64 KiB of base64: an RSA 8192 key is under 7 KiB).
    static let maximumBodyLength = 65_536

    /// Reads the first block of `text`; `nil` when there is none or it is not well formed
    /// (no matching end line, characters outside base64, bad padding, a body too large).
    /// Header lines (`Proc-Type: 4,ENCRYPTED`, legacy encryption) make it unreadable too.
    static func first(in text: UnsafeRawBufferPointer) -> PEMBlock? {
        let begin = Array("-----BEGIN ".utf8), dashes = Array("-----".utf8)
        guard let start = find(begin, in: text, from: 0) else { return nil }
        let labelStart = start + begin.count
        guard let labelEnd = find(dashes, in: text, from: labelStart), labelEnd - labelStart <= 64 else { return nil }
        let labelBytes = text[labelStart..<labelEnd]
        guard labelBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let label = String(decoding: labelBytes, as: UTF8.self)
        let bodyStart = labelEnd + dashes.count
        let end = Array("-----END \(label)-----".utf8)
        guard let bodyEnd = find(end, in: text, from: bodyStart), bodyEnd - bodyStart <= maximumBodyLength else { return nil }
        guard let der = decodeBase64(text[bodyStart..<bodyEnd]) else { return nil }
        return PEMBlock(label: label, der: der)
    }

    private static func find(_ needle: [UInt8], in text: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard needle.count <= text.count else { return nil }
        var index = from
        while index + needle.count <= text.count {
            if text[index] == needle[0], (1..<needle.count).allSatisfy({ text[index + $0] == needle[$0] }) { return index }
            index += 1
        }
        return nil
    }

    /// Base64 (RFC 4648 section 4, padded) with whitespace between the characters, decoded in
    /// two passes: the first counts, so that the output is allocated once, in guarded memory.
    private static func decodeBase64(_ body: Slice<UnsafeRawBufferPointer>) -> SecureBytes? {
        var symbols = 0, padding = 0
        for byte in body {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { continue }
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            // Nothing after padding, and only base64 characters (a `:` would be a header line).
            guard padding == 0, value(byte) != nil else { return nil }
            symbols += 1
        }
        guard symbols > 0, (symbols + padding) % 4 == 0, padding <= 2 else { return nil }
        let count = symbols * 3 / 4
        let output = SecureBytes(count: count)
        let decoded = output.withUnsafeMutableBytes { out -> Bool in
            var accumulator: UInt32 = 0, bits = 0, written = 0
            for byte in body {
                guard let six = value(byte) else { continue }
                accumulator = (accumulator << 6) | UInt32(six)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    guard written < out.count else { return false }
                    out[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                    written += 1
                }
            }
            // The bits left over must be zero (a canonical encoding), and the count exact.
            let leftover = accumulator & ((1 << UInt32(bits)) - 1)
            accumulator = 0
            return written == out.count && leftover == 0
        }
        return decoded ? output : nil
    }

    private static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
