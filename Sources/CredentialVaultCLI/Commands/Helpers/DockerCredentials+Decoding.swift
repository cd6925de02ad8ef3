#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

/// `store`'s input read as docker's own helpers read it (Go's `encoding/json` into their
/// `Credentials` struct), where the protocol says nothing: the object's members in order, each
/// key matched to a field exactly or else case-insensitively (Go's folding), a later member
/// replacing an earlier one (`{"Secret": "a", "secret": "b"}` stores `b`), `null` leaving a field
/// as it is, unknown keys ignored, a missing field empty. A field that is not a string, or
/// input that is not one JSON object, is refused.
extension DockerCredentials {
    /// Decodes `input`; `nil` when it is not docker's credentials JSON (the caller reports that
    /// in its own words: nothing here may quote the input, which holds the secret).
    init?(decodingAsGoDoes input: Data) {
        guard (try? OutsideJSON.decode(JSONMembers.AnyValue.self, from: input)) != nil,
            let members = JSONMembers.topLevel(of: Array(input))
        else { return nil }
        self.init(ServerURL: "", Username: "", Secret: "")
        for (name, value) in members {
            guard let field = Self.field(named: name) else { continue }
            if value == Array("null".utf8) { continue }
            guard let text = try? OutsideJSON.decode(String.self, from: Data(value)) else { return nil }
            self[keyPath: field] = text
        }
    }

    /// The field a member named `name` sets: the one with that exact name, else the one its
    /// name folds to.
    private static func field(named name: String) -> WritableKeyPath<DockerCredentials, String>? {
        let fields: [(String, WritableKeyPath<DockerCredentials, String>)] = [("ServerURL", \.ServerURL), ("Username", \.Username), ("Secret", \.Secret)]
        return (fields.first { $0.0 == name } ?? fields.first { folded($0.0) == folded(name) })?.1
    }

    /// Go's case folding of a field name (`appendFoldedName`): ASCII letters upper-cased, and
    /// the two non-ASCII letters whose fold sets hold an ASCII one, LONG S (U+017F) and KELVIN
    /// SIGN (U+212A), as `S` and `K`; every other character folds to a non-ASCII one, which
    /// none of the field names has.
    private static func folded(_ name: String) -> [Unicode.Scalar] {
        name.unicodeScalars.map { scalar in
            switch scalar.value {
            case 0x61...0x7A: Unicode.Scalar(scalar.value - 0x20)!
            case 0x17F: "S"
            case 0x212A: "K"
            default: scalar
            }
        }
    }
}

/// The members of a JSON object, in order, as raw bytes: for input already known to be valid
/// JSON (so that only strings and nesting need tracking). The names are decoded.
enum JSONMembers {
    /// Any JSON value: decoding it checks that a text is JSON (the parser is Foundation's).
    struct AnyValue: Decodable {
        init(from decoder: any Decoder) throws {
            if var array = try? decoder.unkeyedContainer() {
                while !array.isAtEnd { _ = try array.decode(AnyValue.self) }
            } else if let object = try? decoder.container(keyedBy: AnyKey.self) {
                for key in object.allKeys { _ = try object.decode(AnyValue.self, forKey: key) }
            } else {
                let value = try decoder.singleValueContainer()
                if value.decodeNil() { return }
                if (try? value.decode(Bool.self)) != nil || (try? value.decode(Double.self)) != nil { return }
                _ = try value.decode(String.self)
            }
        }
    }

    /// A member name, whatever it is.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The members of the top-level object of `json`; none for a top-level `null` (Go leaves
    /// the struct as it is); `nil` for any other value.
    static func topLevel(of json: [UInt8]) -> [(name: String, value: [UInt8])]? {
        var index = skipWhitespace(json, 0)
        if json[index...].starts(with: Array("null".utf8)) { return [] }
        guard index < json.count, json[index] == UInt8(ascii: "{") else { return nil }
        var members: [(name: String, value: [UInt8])] = []
        index = skipWhitespace(json, index + 1)
        while index < json.count, json[index] != UInt8(ascii: "}") {
            let nameEnd = endOfValue(json, index)
            guard let name = try? OutsideJSON.decode(String.self, from: Data(json[index..<nameEnd])) else { return nil }
            index = skipWhitespace(json, nameEnd)
            guard index < json.count, json[index] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipWhitespace(json, index + 1)
            let valueEnd = endOfValue(json, valueStart)
            members.append((name, Array(json[valueStart..<valueEnd])))
            index = skipWhitespace(json, valueEnd)
            if index < json.count, json[index] == UInt8(ascii: ",") { index = skipWhitespace(json, index + 1) }
        }
        return members
    }

    private static func skipWhitespace(_ json: [UInt8], _ start: Int) -> Int {
        var index = start
        while index < json.count, [0x20, 0x09, 0x0A, 0x0D].contains(json[index]) { index += 1 }
        return index
    }

    /// Where the value starting at `start` ends: past a string's closing quote, past the
    /// bracket that closes an object or array, or at the `,`, `}`, `]` or white space after a
    /// number or literal.
    private static func endOfValue(_ json: [UInt8], _ start: Int) -> Int {
        var index = start
        var depth = 0
        var inString = false
        while index < json.count {
            let byte = json[index]
            index += 1
            if inString {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return index }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return index - 1 }
                depth -= 1
                if depth == 0 { return index }
            case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D:
                if depth == 0 { return index - 1 }
            default: break
            }
        }
        return index
    }
}
