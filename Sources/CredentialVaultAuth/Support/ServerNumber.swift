import Foundation

/// Range checks for the numbers a server sends (`expires_in`, the device `interval`,
/// `Retry-After`, a JWT's `exp`, `Cache-Control: max-age`). No server value reaches
/// `Duration` or `Date` arithmetic unchecked: what is nonsense (negative, NaN, infinite, not
/// a number) is refused with `AuthError.invalidResponse`, what is merely large is clamped.
enum ServerNumber {
    /// The longest access-token lifetime believed (one year); longer ones are clamped.
    static let maximumLifetime: TimeInterval = 366 * 86_400
    /// The longest device-code lifetime believed (one hour); longer ones are clamped.
    static let maximumDeviceCodeLifetime: TimeInterval = 3_600
    /// The device polling interval is kept within 1 s ... 5 minutes.
    static let deviceIntervalRange: ClosedRange<TimeInterval> = 1...300
    /// A `Retry-After` is kept within 0 ... 1 day.
    static let maximumRetryAfter = 86_400

    /// A number from a JSON member that may be a number or a numeric string (some providers
    /// quote `expires_in`). `nil` when absent or `null`; `invalidResponse` when present but
    /// not a finite number.
    static func decode<Key: CodingKey>(_ key: Key, in container: KeyedDecodingContainer<Key>) throws -> Double? {
        guard container.contains(key), !(try container.decodeNil(forKey: key)) else { return nil }
        if let number = try? container.decode(Double.self, forKey: key), number.isFinite { return number }
        if let text = try? container.decode(String.self, forKey: key),
            let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite
        {
            return number
        }
        throw AuthError.invalidResponse("\(key.stringValue) is not a finite number")
    }

    /// A lifetime in seconds: refused when negative, clamped to `maximum`.
    static func lifetime(_ value: Double, field: String, maximum: TimeInterval = maximumLifetime) throws(AuthError) -> TimeInterval {
        guard value.isFinite, value >= 0 else { throw .invalidResponse("\(field) is not a valid lifetime") }
        return min(value, maximum)
    }

    /// A polling interval: refused when negative, clamped into `deviceIntervalRange`.
    static func interval(_ value: Double, field: String) throws(AuthError) -> Duration {
        guard value.isFinite, value >= 0 else { throw .invalidResponse("\(field) is not a valid interval") }
        return .clamped(seconds: min(max(value, deviceIntervalRange.lowerBound), deviceIntervalRange.upperBound))
    }

    /// Delta-seconds (a `Retry-After` header, a `Cache-Control: max-age` value); `nil` when
    /// absent or not a number (an HTTP date is not honoured), clamped to 0 ...
    /// `maximumRetryAfter`. Leading zeros are dropped before the length is judged, so
    /// `000000000003600` is an hour, and any number of digits is safe.
    static func retryAfter(_ header: String?) -> Int? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
            text.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        let digits = text.drop { $0 == "0" }
        guard digits.count <= 9 else { return maximumRetryAfter }  // beyond any clamp, and far from Int's range
        return min(Int(digits) ?? 0, maximumRetryAfter)
    }
}

extension Duration {
    /// The longest duration the client ever waits for (100 years): every conversion from
    /// seconds stays far from `Duration`'s range.
    static let longest: Duration = .seconds(100 * 366 * 86_400)

    /// A duration of `value` seconds that never traps: NaN and negatives give zero, values
    /// beyond `longest` give `longest`, fractions are kept to the millisecond.
    static func clamped(seconds value: Double) -> Duration {
        guard value.isFinite, value > 0 else { return .zero }
        let limit = Double(longest.components.seconds)
        guard value < limit else { return longest }
        return .milliseconds(Int64((value * 1000).rounded()))
    }
}
