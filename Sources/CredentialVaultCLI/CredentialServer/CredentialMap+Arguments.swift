import CredentialVault
import CredentialVaultCredentialServer

/// The `--map` values of `credvault serve-credentials`.
///
/// Each is `CREDNAME=SERVICE/ACCOUNT[,UNIT]...`: the credential name systemd asks for (the ID
/// of `LoadCredential=ID:/path/to/socket`), the key in the store (`SERVICE/ACCOUNT` as every
/// command writes it, `CredentialKeyName`: split at the last `/`, a `/` in the account written
/// `%2F`, so git's `git:https://host/alice` is served), and the units allowed to get it (none
/// listed: any unit).
extension CredentialMap {
    /// Parses the `--map` values; throws `UsageError` saying which one is wrong and why.
    init(_ values: [String]) throws(UsageError) {
        guard !values.isEmpty else { throw UsageError("give at least one --map CREDNAME=SERVICE/ACCOUNT[,UNIT]...") }
        var entries: [Entry] = []
        for value in values { entries.append(try Self.parse(value)) }
        do { try self.init(entries: entries) } catch { throw UsageError("--map: \(Self.reason(error))") }
    }

    private static func parse(_ value: String) throws(UsageError) -> Entry {
        let usage = "--map takes CREDNAME=SERVICE/ACCOUNT[,UNIT]..."
        guard let equals = value.firstIndex(of: "=") else { throw UsageError("\(usage) (no '=')") }
        let credential = String(value[..<equals])
        var parts = value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let name = parts.removeFirst()
        // The name is checked before the key, as it always was: its error comes first.
        guard isValidCredentialName(credential) else {
            throw UsageError("\(usage): the credential name must be a file name without ',', ':' or control characters")
        }
        let key = try CredentialKeyName.parse(name[...], context: "--map \(credential)=")
        do { return try Entry(credential: credential, key: key, units: Set(parts)) } catch { throw UsageError("\(usage): \(reason(error))") }
    }

    /// The text of a refusal of the map's (`invalidArgument`).
    private static func reason(_ error: CredentialVaultError) -> String {
        if case .invalidArgument(let why) = error { return why }
        return "\(error)"
    }
}
