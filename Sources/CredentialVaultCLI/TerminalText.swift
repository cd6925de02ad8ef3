#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Text the CLI prints around names it did not choose (names listed from a vault or keyring,
/// words from the command line, paths): control characters are shown escaped, so a name can
/// neither forge lines or columns (TAB, LF) nor send a terminal escape sequence (ESC, CSI), nor
/// reorder what the terminal shows (bidirectional overrides); and a backslash is doubled, so an
/// escape in the output always stands for the character it names, never for itself.
package enum TerminalText {
    /// `text` with every C0 control character, DEL and C1 control character written as `\xHH`
    /// (its code point in hex), the line and paragraph separators and the bidirectional and
    /// invisible formatting characters as `\u{HHHH}`, a backslash as `\\`; everything else as
    /// it is.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
            } else if isFormatting(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// One line of TAB-separated fields, each escaped.
    package static func line(_ fields: String...) -> String {
        fields.map(escaped).joined(separator: "\t")
    }

    /// JSON text with the characters `JSONSerialization` leaves raw in strings (DEL, C1
    /// controls, the line separators, bidirectional and invisible formatting characters)
    /// written as `\uHHHH` escapes: the same value for a JSON reader, nothing for a terminal to
    /// act on. (Outside strings, JSON text has none of them.)
    package static func jsonEscaped(_ json: Data) -> Data {
        let text = String(decoding: json, as: UTF8.self)
        guard text.unicodeScalars.contains(where: { isControl($0) || isFormatting($0) }) else { return json }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) || isFormatting(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return Data(out.utf8)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\\" || isControl(scalar) || isFormatting(scalar)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Line and paragraph separators, bidirectional marks, embeddings, overrides and isolates,
    /// zero-width characters and the byte-order mark.
    private static func isFormatting(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: true
        default: false
        }
    }
}
