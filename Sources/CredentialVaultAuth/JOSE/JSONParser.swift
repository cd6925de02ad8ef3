import Foundation

/// A strict recursive-descent RFC 8259 parser over UTF-8 bytes.
///
/// Safe on hostile input: every index access is bounds-checked through `peek`/`next`,
/// recursion is bounded by `maximumDepth` (itself capped, so a caller cannot ask for a stack
/// overflow), numbers are validated against the JSON grammar before conversion and must be
/// finite, strings must be valid UTF-8 without raw control characters or lone surrogates,
/// and duplicate member names are an error.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private let maximumDepth: Int

    /// A hard cap on nesting whatever the caller asks for; each level is one stack frame.
    static let depthCap = 128

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = min(max(maximumDepth, 1), Self.depthCap)
    }

    /// Parses exactly one value surrounded by optional whitespace.
    mutating func parseDocument() throws(JOSEError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw .invalidJSON("trailing content") }
        return value
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func next() throws(JOSEError) -> UInt8 {
        guard index < bytes.count else { throw .invalidJSON("unexpected end of input") }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expectLiteral(_ literal: String, value: JSONValue) throws(JOSEError) -> JSONValue {
        for byte in literal.utf8 {
            guard try next() == byte else { throw .invalidJSON("invalid literal") }
        }
        return value
    }

    private mutating func parseValue(depth: Int) throws(JOSEError) -> JSONValue {
        guard let byte = peek() else { throw .invalidJSON("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expectLiteral("true", value: .bool(true))
        case UInt8(ascii: "f"): return try expectLiteral("false", value: .bool(false))
        case UInt8(ascii: "n"): return try expectLiteral("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw .invalidJSON("unexpected character")
        }
    }

    private mutating func parseObject(depth: Int) throws(JOSEError) -> JSONValue {
        guard depth <= maximumDepth else { throw .invalidJSON("nesting too deep") }
        index += 1  // "{"
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw .invalidJSON("expected member name") }
            let name = try parseString()
            skipWhitespace()
            guard try next() == UInt8(ascii: ":") else { throw .invalidJSON("expected ':'") }
            skipWhitespace()
            let value = try parseValue(depth: depth)
            // Dictionary keys compare by canonical equivalence, which is stricter here: two
            // names that merely look alike are also treated as duplicates.
            guard members.updateValue(value, forKey: name) == nil else {
                throw .invalidJSON("duplicate member name")
            }
            skipWhitespace()
            switch try next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return .object(members)
            default: throw .invalidJSON("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JOSEError) -> JSONValue {
        guard depth <= maximumDepth else { throw .invalidJSON("nesting too deep") }
        index += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch try next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return .array(elements)
            default: throw .invalidJSON("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws(JOSEError) -> String {
        index += 1  // opening quote
        var out: [UInt8] = []
        while true {
            let byte = try next()
            switch byte {
            case UInt8(ascii: "\""):
                // Raw bytes are copied through unchanged, so validate the whole result once.
                guard let string = String(validating: out, as: UTF8.self) else {
                    throw .invalidJSON("invalid UTF-8 in string")
                }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &out)
            case 0x00..<0x20:
                throw .invalidJSON("control character in string")
            default:
                out.append(byte)
            }
        }
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws(JOSEError) {
        let byte = try next()
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var code = UInt32(try parseHex4())
            if (0xD800..<0xDC00).contains(code) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard try next() == UInt8(ascii: "\\"), try next() == UInt8(ascii: "u") else {
                    throw .invalidJSON("lone surrogate")
                }
                let low = UInt32(try parseHex4())
                guard (0xDC00..<0xE000).contains(low) else { throw .invalidJSON("lone surrogate") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(code) {
                throw .invalidJSON("lone surrogate")
            }
            guard let scalar = Unicode.Scalar(code) else { throw .invalidJSON("invalid escape") }
            UTF8.encode(scalar) { out.append($0) }
        default:
            throw .invalidJSON("invalid escape")
        }
    }

    private mutating func parseHex4() throws(JOSEError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = try next()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalidJSON("invalid escape")
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    private mutating func skipDigits() -> Int {
        let start = index
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index - start
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, then converted by the
    /// standard library, which only ever sees grammar-valid ASCII.
    private mutating func parseNumber() throws(JOSEError) -> Double {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") {
            index += 1
        } else {
            guard skipDigits() > 0 else { throw .invalidJSON("invalid number") }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { throw .invalidJSON("invalid number") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw .invalidJSON("invalid number") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw .invalidJSON("number out of range") }
        return value
    }
}
