#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

/// `VAR=SERVICE/ACCOUNT`, as `credvault exec --env` and `--fd` take it.
///
/// The variable is everything before the first `=`: a portable environment variable name
/// (`[A-Za-z_][A-Za-z0-9_]*`). The rest is split at its last `/`: the service may hold `/`
/// as it is (`git:https://example.com/alice` is the service `git:https://example.com`, the
/// account `alice`); a `/` in the account is written `%2F`. In both names `%2F` (or `%2f`)
/// stands for `/` and `%25` for `%`; any other `%` is refused, so every reference means one
/// name only.
struct CredentialReference: Sendable, Hashable {
    /// The environment variable the child gets.
    let variable: String
    /// The credential.
    let key: CredentialKey

    /// Parses `text`, the value of `--option`; throws `UsageError` saying what is wrong.
    init(parsing text: String, option: String) throws(UsageError) {
        guard let equals = text.firstIndex(of: "=") else { throw UsageError("--\(option) takes VAR=SERVICE/ACCOUNT") }
        let variable = String(text[..<equals])
        guard Self.isVariableName(variable) else {
            throw UsageError("--\(option): '\(variable)' is not a variable name (letters, digits and _, not starting with a digit)")
        }
        let name = text[text.index(after: equals)...]
        guard let slash = name.lastIndex(of: "/") else {
            throw UsageError("--\(option) \(variable)=: give SERVICE/ACCOUNT (a / in the account is written %2F)")
        }
        let service = try Self.unescaped(name[..<slash], option: option)
        let account = try Self.unescaped(name[name.index(after: slash)...], option: option)
        let key = CredentialKey(service: service, account: account)
        do { try key.validate() } catch { throw UsageError("--\(option) \(variable)=: \(error.description)") }
        self.variable = variable
        self.key = key
    }

    /// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`.
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
        }
    }

    /// `text` with `%2F` / `%2f` as `/` and `%25` as `%`; any other `%` is refused.
    static func unescaped(_ text: Substring, option: String) throws(UsageError) -> String {
        var out = ""
        var rest = text[...]
        while let percent = rest.firstIndex(of: "%") {
            out += rest[..<percent]
            let code = rest[rest.index(after: percent)...].prefix(2)
            switch code {
            case "2F", "2f": out += "/"
            case "25": out += "%"
            default: throw UsageError("--\(option): a % in a name is written %25 (and a / in the account %2F)")
            }
            rest = rest[rest.index(percent, offsetBy: 3)...]
        }
        return out + rest
    }
}
