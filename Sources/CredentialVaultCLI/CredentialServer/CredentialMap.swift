import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `--map` entries of `credvault serve-credentials`: which stored credential answers which
/// systemd credential name, for which units.
///
/// Each entry is `CREDNAME=SERVICE/ACCOUNT[,UNIT]...`: the credential name systemd asks for
/// (the ID of `LoadCredential=ID:/path/to/socket`), the key in the store (`SERVICE/ACCOUNT`
/// as every command writes it, `CredentialKeyName`: split at the last `/`, a `/` in the
/// account written `%2F`, so git's `git:https://host/alice` is served), and the units allowed
/// to get it (none listed: any unit). Two entries for the same name must name disjoint,
/// non-empty unit sets, so that each request matches at most one entry.
struct CredentialMap: Sendable {
    /// One `--map` value.
    struct Entry: Sendable, Equatable {
        var credential: String
        var key: CredentialKey
        /// The allowed units; empty: every unit.
        var units: Set<String>
    }

    let entries: [Entry]

    /// Parses the `--map` values; throws `UsageError` saying which one is wrong and why.
    init(_ values: [String]) throws(UsageError) {
        guard !values.isEmpty else { throw UsageError("give at least one --map CREDNAME=SERVICE/ACCOUNT[,UNIT]...") }
        var entries: [Entry] = []
        for value in values {
            let entry = try Self.parse(value)
            for other in entries where other.credential == entry.credential {
                if other.units.isEmpty || entry.units.isEmpty || !other.units.isDisjoint(with: entry.units) {
                    throw UsageError("--map: the credential \(entry.credential) is mapped twice for the same unit")
                }
            }
            entries.append(entry)
        }
        self.entries = entries
    }

    /// The entry answering `credential` for `unit`, if any.
    func entry(credential: String, unit: String) -> Entry? {
        entries.first { $0.credential == credential && ($0.units.isEmpty || $0.units.contains(unit)) }
    }

    private static func parse(_ value: String) throws(UsageError) -> Entry {
        let usage = "--map takes CREDNAME=SERVICE/ACCOUNT[,UNIT]..."
        guard let equals = value.firstIndex(of: "=") else { throw UsageError("\(usage) (no '=')") }
        let credential = String(value[..<equals])
        guard SystemdCredentialNaming.isValidName(credential), !credential.contains(","), !credential.contains(":"),
            !CredentialKey.hasControlCharacter(credential)
        else {
            throw UsageError("\(usage): the credential name must be a file name without ',', ':' or control characters")
        }
        var parts = value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let name = parts.removeFirst()
        let key = try CredentialKeyName.parse(name[...], context: "--map \(credential)=")
        for unit in parts where !isValidUnit(unit) {
            throw UsageError("\(usage): '\(unit)' is not a unit name (non-empty, no '/', no control characters, at most 255 bytes)")
        }
        return Entry(credential: credential, key: key, units: Set(parts))
    }

    /// A unit name as it can appear in systemd's address: non-empty, at most 255 bytes, no `/`
    /// and no control character.
    static func isValidUnit(_ unit: String) -> Bool {
        !unit.isEmpty && unit.utf8.count <= 255 && !unit.contains("/") && !CredentialKey.hasControlCharacter(unit)
    }
}
