#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

/// `VAR=SERVICE/ACCOUNT`, as `credvault exec --env` and `--fd` take it.
///
/// The variable is everything before the first `=`: a portable environment variable name
/// (`[A-Za-z_][A-Za-z0-9_]*`). The rest is the credential's `SERVICE/ACCOUNT`, written as
/// every command writes it (`CredentialKeyName`: split at the last `/`, `%2F` and `%25`).
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
        self.variable = variable
        key = try CredentialKeyName.parse(text[text.index(after: equals)...], context: "--\(option) \(variable)=")
    }

    /// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`.
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
        }
    }
}
