import Foundation

/// Typed access to registered claims. A claim that is present with the wrong JSON type is
/// an error (`.malformed`), never silently treated as absent: "absent" may be acceptable
/// where "present but garbage" is not.
struct IDTokenClaims {
    let claims: [String: JSONValue]

    init(_ claims: [String: JSONValue]) { self.claims = claims }

    /// The string claim `name`, `nil` if absent.
    func string(_ name: String) throws(IDTokenError) -> String? {
        switch claims[name] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .malformed("claim \"\(name)\" is not a string")
        }
    }

    /// A NumericDate claim (RFC 7519 section 2: seconds since the epoch, possibly
    /// fractional), `nil` if absent. JSON numbers are always finite here.
    func date(_ name: String) throws(IDTokenError) -> Date? {
        switch claims[name] {
        case nil: return nil
        case .number(let seconds)?: return Date(timeIntervalSince1970: seconds)
        default: throw .malformed("claim \"\(name)\" is not a number")
        }
    }

    /// `aud` as a non-empty array of strings (RFC 7519 4.1.3: a string or an array of
    /// strings), `nil` if absent.
    func audience() throws(IDTokenError) -> [String]? {
        switch claims["aud"] {
        case nil:
            return nil
        case .string(let value)?:
            return [value]
        case .array(let values)?:
            let strings = values.compactMap(\.stringValue)
            guard !strings.isEmpty, strings.count == values.count else {
                throw .malformed("claim \"aud\" is not a non-empty array of strings")
            }
            return strings
        default:
            throw .malformed("claim \"aud\" is not a string or an array")
        }
    }
}
