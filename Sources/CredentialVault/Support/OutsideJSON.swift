#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one way JSON that comes from outside the process (a helper's stdin, a provider's or a
/// backend's answer, a stored session value) is decoded.
///
/// The toolchain's `JSONDecoder` stops the process, instead of throwing, on input nested one
/// level deeper than its own limit of 512 (it computes the error's location past the end of the
/// buffer and traps), and a trap is not an error a caller can catch. So the nesting is counted
/// first, by a byte scan that cannot trap, and input nested deeper than `maximumDepth` is refused
/// with a thrown error before the decoder sees it. No document this project reads from outside
/// nests anywhere near that deep.
package enum OutsideJSON {
    /// The deepest nesting of arrays and objects accepted (the decoder's own limit is 512).
    package static let maximumDepth = 64

    /// Thrown for input nested deeper than `maximumDepth`; callers report it as they report any
    /// other input that is not the JSON they expect.
    package struct TooDeeplyNested: Error, Equatable {
        package init() {}
    }

    /// Thrown for input that is not UTF-8 JSON (it holds a zero byte): the decoder would take
    /// it for UTF-16 or UTF-32 (by a byte-order mark, or by its zero bytes) and decode it after
    /// converting it, so counting the nesting in its bytes would say nothing of what the decoder
    /// sees. JSON exchanged between programs is UTF-8 (RFC 8259), which never holds a zero byte
    /// (a control character in a string is escaped), while UTF-16 or UTF-32 JSON always does
    /// (its ASCII brackets, quotes and digits).
    package struct NotUTF8: Error, Equatable {
        package init() {}
    }

    /// Decodes `data` as `type` with `decoder`, after refusing input that is not UTF-8 or is
    /// nested too deeply to decode without risk.
    package static func decode<T: Decodable>(_ type: T.Type, from data: Data, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        guard !data.contains(0) else { throw NotUTF8() }
        guard nestingIsWithinLimit(data) else { throw TooDeeplyNested() }
        return try decoder.decode(type, from: data)
    }

    /// Whether no array or object in `bytes` (brackets outside strings, a string's escapes
    /// skipped) is nested deeper than `limit`. Says nothing else about the input: malformed
    /// text within the limit is for the decoder to refuse.
    package static func nestingIsWithinLimit<Bytes: Sequence<UInt8>>(_ bytes: Bytes, limit: Int = maximumDepth) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth = max(0, depth - 1)
            default: break
            }
        }
        return true
    }
}
