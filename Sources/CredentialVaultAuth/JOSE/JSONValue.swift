import Foundation

/// A JSON value as found in JOSE headers, JWT claims and JWKs.
///
/// Parsed by a small strict RFC 8259 parser (`JSONValue.parse`) rather than
/// `JSONSerialization`, so that the rules that matter for security are explicit: duplicate
/// member names are rejected (RFC 7515 section 5.2 allows either rejecting or taking the
/// last one; taking one silently lets two parsers disagree on a claim), nesting depth is
/// bounded, invalid UTF-8 and lone surrogates are rejected, and nothing ever traps.
public enum JSONValue: Sendable, Equatable, Codable {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// A number (always finite). JOSE numbers are NumericDates and small integers, which a
    /// Double holds exactly up to 2^53.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; member names are unique.
    case object([String: JSONValue])

    /// The default bound on nesting depth accepted by `parse`.
    public static let defaultMaximumDepth = 32

    /// Parses one JSON text (RFC 8259) from UTF-8 bytes.
    /// - Parameters:
    ///   - data: the UTF-8 text; surrounding whitespace is allowed, trailing content is not.
    ///   - maximumDepth: how many arrays/objects may nest (bounded recursion).
    /// - Throws: `JOSEError.invalidJSON` with a reason that never quotes the input.
    public static func parse(_ data: Data, maximumDepth: Int = defaultMaximumDepth) throws(JOSEError) -> JSONValue {
        var parser = JSONParser(bytes: Array(data), maximumDepth: maximumDepth)
        return try parser.parseDocument()
    }

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is a number.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The Boolean, if this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The member `key` of an object; `nil` if absent or if this is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// Decodes from any `Decoder` (for storing verified claims, e.g. in a session).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes to any `Encoder`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
