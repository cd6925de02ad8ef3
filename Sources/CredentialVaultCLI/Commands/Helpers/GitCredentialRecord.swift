#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stored value of a git credential. A password alone is stored as its bytes, so that
/// `credvault lookup git:https://example.com alice` prints it and `credvault exec --env` hands it
/// on. With the fields git may send beside it (`password_expiry_utc`, `oauth_refresh_token`),
/// the value is a record: a NUL byte, `git-credential`, a newline, then `key=value` lines. A git
/// password cannot start with NUL (git's values are C strings), so the two never collide.
struct GitCredentialRecord {
    /// The password or token.
    var password: Data
    /// `password_expiry_utc`, as git sent it.
    var passwordExpiry: String?
    /// `oauth_refresh_token`.
    var refreshToken: Data?

    /// Bytes, not `Data`: a static `Data` is reported by LeakSanitizer as a leak (its storage
    /// pointer is kept in a form the sanitizer does not recognise), which fails the fuzz run.
    static let marker = Array("\u{0}git-credential\n".utf8)

    /// The stored bytes (the caller wipes them).
    var encoded: Data {
        guard passwordExpiry != nil || refreshToken != nil else { return password }
        var out = Data(Self.marker) + Data("password=".utf8) + password + Data("\n".utf8)
        if let passwordExpiry { out += Data("password_expiry_utc=\(passwordExpiry)\n".utf8) }
        if let refreshToken { out += Data("oauth_refresh_token=".utf8) + refreshToken + Data("\n".utf8) }
        return out
    }

    /// Decodes a stored value; `nil` for a record this helper did not write in a form it reads.
    init?(decoding value: Data) {
        guard value.starts(with: Self.marker) else {
            password = value
            return
        }
        guard let fields = try? GitCredentialRequest(parsing: Data(value.dropFirst(Self.marker.count))), let password = fields.password
        else { return nil }
        self.password = password
        passwordExpiry = fields.passwordExpiry
        refreshToken = fields.refreshToken
    }

    init(password: Data, passwordExpiry: String?, refreshToken: Data?) {
        self.password = password
        self.passwordExpiry = passwordExpiry
        self.refreshToken = refreshToken
    }

    /// The answer to `get`: `username=`, `password=` and the other fields, one line each; `nil`
    /// when a value holds a byte git's protocol cannot carry (NUL, CR, LF: a stored value with a
    /// newline would otherwise forge further lines of the answer).
    func answer(username: String) -> Data? {
        guard Self.canCarry(username), Self.canCarry(password), refreshToken.map(Self.canCarry) ?? true else { return nil }
        var out = Data("username=\(username)\npassword=".utf8) + password + Data("\n".utf8)
        if let passwordExpiry { out += Data("password_expiry_utc=\(passwordExpiry)\n".utf8) }
        if let refreshToken { out += Data("oauth_refresh_token=".utf8) + refreshToken + Data("\n".utf8) }
        return out
    }

    /// Whether git's protocol can carry `value` as a field's value: no NUL, CR or LF byte.
    static func canCarry(_ value: some Sequence<UInt8>) -> Bool {
        !value.contains { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D }
    }

    /// Whether git's protocol can carry `name` (see `canCarry(_:)` for bytes).
    static func canCarry(_ name: String) -> Bool { canCarry(name.utf8) }

    /// Wipes the secrets it holds.
    mutating func wipe() {
        password.wipe()
        refreshToken?.wipe()
    }
}
