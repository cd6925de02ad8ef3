/// Small text helpers that need no Foundation (the lean `credvault` links only
/// FoundationEssentials, which has no `String(format:)` or `trimmingCharacters(in:)`).
enum PlainText {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hexadecimal, two digits a byte (what `String(format: "%02x")` gave).
    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` without leading and trailing white space (spaces, tabs, line breaks, and the
    /// other Unicode white space, as `.whitespacesAndNewlines` trimmed).
    static func trimmed<Text: StringProtocol>(_ text: Text) -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0.isNewline }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(text[first...last])
    }
}
