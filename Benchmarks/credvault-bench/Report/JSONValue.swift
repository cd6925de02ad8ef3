import Foundation

/// A minimal JSON value with ordered object keys, so that every line reads the same way.
enum JSONValue {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([JSONField])

    func render() -> String {
        switch self {
        case .string(let s): return Self.quote(s)
        case .int(let i): return String(i)
        case .double(let d):
            guard d.isFinite else { return "null" }
            // Up to three decimals, no exponent, trailing zeros trimmed: 1.07, 812.5, 391234567.
            var text = String(format: "%.3f", d)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            return text
        case .bool(let b): return b ? "true" : "false"
        case .array(let items): return "[" + items.map { $0.render() }.joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.map { Self.quote($0.key) + ":" + $0.value.render() }.joined(separator: ",") + "}"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// One field of a JSON object (a struct: a tuple here makes the non-optimised compiler report
/// a circular reference).
struct JSONField {
    let key: String
    let value: JSONValue

    init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
