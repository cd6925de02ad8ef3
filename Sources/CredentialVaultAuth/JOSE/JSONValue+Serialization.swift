import Foundation

extension JSONValue {
    /// Compact JSON text (RFC 8259) for what this library signs: members sorted by name, no
    /// whitespace, and integral numbers written as integers.
    ///
    /// The integer rule is why this exists rather than `JSONEncoder`: NumericDate claims (`iat`,
    /// `exp`) must be integers to many servers (glewlwyd reads them with jansson's
    /// `json_integer_value`, which gives 0 for `1.7E9` or `1700000000.0`), and Foundation's
    /// encoders do not promise how a `Double` is written.
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// The UTF-8 bytes of `serialized`.
    public var serializedData: Data { Data(serialized.utf8) }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let value): out += Self.number(value)
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, name) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.writeString(name, to: &out)
                out += ":"
                members[name]?.write(to: &out)
            }
            out += "}"
        }
    }

    /// Integers up to 2^53 exactly as integers; other finite numbers in Swift's shortest
    /// round-trip form; NaN and infinities (not JSON) as `null`.
    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) <= 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }

    private static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
