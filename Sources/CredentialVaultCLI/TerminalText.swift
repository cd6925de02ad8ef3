/// Text the CLI prints around names it did not choose (names listed from a vault or keyring,
/// words from the command line): control characters are shown escaped, so a name can neither
/// forge lines or columns (TAB, LF) nor send a terminal escape sequence (ESC, CSI).
public enum TerminalText {
    /// `text` with every C0 control character, DEL and C1 control character written as `\xHH`
    /// (its code point in hex); everything else as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// One line of TAB-separated fields, each escaped.
    public static func line(_ fields: String...) -> String {
        fields.map(escaped).joined(separator: "\t")
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
