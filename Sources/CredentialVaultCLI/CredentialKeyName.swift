import CredentialVault

/// `SERVICE/ACCOUNT`, the one way every command that takes a credential's key in a single
/// argument writes it (`credvault exec --env/--fd`, `credvault serve-credentials --map`).
///
/// The text is split at its last `/`: the service may hold `/` as it is
/// (`git:https://example.com/alice` is the service `git:https://example.com`, the account
/// `alice`, as git's helper stores it); a `/` in the account is written `%2F`. In both names
/// `%2F` (or `%2f`) stands for `/` and `%25` for `%`; any other `%` is refused, so that every
/// text names one key only.
package enum CredentialKeyName {
    /// The key `text` names, validated. `context` begins every error message (`--env TOKEN=`).
    package static func parse(_ text: Substring, context: String) throws(UsageError) -> CredentialKey {
        guard let slash = text.lastIndex(of: "/") else {
            throw UsageError("\(context): give SERVICE/ACCOUNT (a / in the account is written %2F)")
        }
        let key = CredentialKey(
            service: try unescaped(text[..<slash], context: context),
            account: try unescaped(text[text.index(after: slash)...], context: context))
        do { try key.validate() } catch { throw UsageError("\(context): \(error.description)") }
        return key
    }

    /// `text` with `%2F` / `%2f` as `/` and `%25` as `%`; any other `%` is refused.
    static func unescaped(_ text: Substring, context: String) throws(UsageError) -> String {
        var out = ""
        var rest = text[...]
        while let percent = rest.firstIndex(of: "%") {
            out += rest[..<percent]
            let code = rest[rest.index(after: percent)...].prefix(2)
            switch code {
            case "2F", "2f": out += "/"
            case "25": out += "%"
            default: throw UsageError("\(context): a % in a name is written %25 (and a / in the account %2F)")
            }
            rest = rest[rest.index(percent, offsetBy: 3)...]
        }
        return out + rest
    }
}
