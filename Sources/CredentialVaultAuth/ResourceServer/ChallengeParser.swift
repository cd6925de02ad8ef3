/// The `WWW-Authenticate` grammar of RFC 9110 §11.6.1 over bytes, bounds-checked everywhere:
///
///     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
///     auth-param = token BWS "=" BWS ( token / quoted-string )
///
/// Commas separate both challenges and parameters: a token not followed by `=` starts the
/// next challenge.
struct ChallengeParser {
    private let bytes: [UInt8]
    private var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    private static func malformed(_ why: String) -> AuthError { .invalidResponse("malformed WWW-Authenticate header: \(why)") }

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    /// tchar of RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// token68 adds "/" and trailing "=" to the token bytes it shares.
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        isTokenByte(byte) || byte == UInt8(ascii: "/")
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 { index += 1 }
    }

    private mutating func skipSeparators() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") { index += 1 }
    }

    private mutating func token() -> String {
        let start = index
        while let byte = peek(), Self.isTokenByte(byte) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    mutating func challenges() throws(AuthError) -> [AuthenticationChallenge] {
        var result: [AuthenticationChallenge] = []
        while true {
            skipSeparators()
            guard peek() != nil else { return result }
            guard result.count < AuthenticationChallenge.maximumCount else { throw Self.malformed("too many challenges") }
            let scheme = token()
            guard !scheme.isEmpty else { throw Self.malformed("a challenge does not start with a scheme") }
            result.append(try challenge(scheme: scheme))
        }
    }

    private mutating func challenge(scheme: String) throws(AuthError) -> AuthenticationChallenge {
        var challenge = AuthenticationChallenge(scheme: scheme)
        guard let byte = peek(), byte == 0x20 || byte == 0x09 else { return challenge }  // a bare scheme
        skipWhitespace()
        if let token68 = token68() {
            challenge.token68 = token68
            return challenge
        }
        while true {
            skipWhitespace()
            while peek() == UInt8(ascii: ",") {  // empty list elements (RFC 9110 §5.6.1)
                index += 1
                skipWhitespace()
            }
            let start = index
            let name = token()
            guard !name.isEmpty else {
                if peek() == nil { return challenge }
                throw Self.malformed("unexpected character")
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: "=") else {
                index = start  // the next challenge's scheme
                return challenge
            }
            index += 1
            skipWhitespace()
            let value = try parameterValue()
            let key = name.lowercased()
            guard challenge.parameters[key] == nil else { throw Self.malformed("parameter \(key.prefix(40)) repeated") }
            guard challenge.parameters.count < AuthenticationChallenge.maximumCount else { throw Self.malformed("too many parameters") }
            challenge.parameters[key] = value
            skipWhitespace()
            guard let next = peek() else { return challenge }
            guard next == UInt8(ascii: ",") else { throw Self.malformed("parameters must be separated by commas") }
            index += 1
        }
    }

    /// A token68 (`abc==`) when what follows the scheme is one: its bytes, then only `=`,
    /// then the end or a comma. Otherwise nothing is consumed.
    private mutating func token68() -> String? {
        var end = index
        while end < bytes.count, Self.isToken68Byte(bytes[end]) { end += 1 }
        guard end > index else { return nil }
        var padded = end
        while padded < bytes.count, bytes[padded] == UInt8(ascii: "=") { padded += 1 }
        var after = padded
        while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 { after += 1 }
        let endsItem = after == bytes.count || bytes[after] == UInt8(ascii: ",")
        // `name=value` is a parameter (a value follows the "="); a lone token before a comma is
        // the next challenge's scheme. Only padding or a "/" makes a token68.
        let looksLikeToken68 = padded > end || bytes[index..<end].contains(UInt8(ascii: "/"))
        guard endsItem, looksLikeToken68 else { return nil }
        let text = String(decoding: bytes[index..<padded], as: UTF8.self)
        index = padded
        return text
    }

    private mutating func parameterValue() throws(AuthError) -> String {
        guard peek() == UInt8(ascii: "\"") else {
            let value = token()
            guard !value.isEmpty else { throw Self.malformed("a parameter has no value") }
            return value
        }
        index += 1
        var value: [UInt8] = []
        while true {
            guard let byte = peek() else { throw Self.malformed("unterminated quoted string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = peek(), escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else {
                    throw Self.malformed("invalid escape in a quoted string")
                }
                index += 1
                value.append(escaped)
            case 0x09, 0x20...0x7E, 0x80...0xFF:
                value.append(byte)
            default:
                throw Self.malformed("control character in a quoted string")
            }
        }
    }
}
