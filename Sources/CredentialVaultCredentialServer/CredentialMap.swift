import CredentialVault

/// Which stored credential answers which systemd credential name, for which units: the
/// credentials a `CredentialServer` hands out, and to whom.
///
/// systemd asks for a credential by the ID of `LoadCredential=ID:/path/to/socket`, naming the
/// unit being started. An entry answers that name with the value stored under its key, for the
/// units it lists (none listed: any unit; a unit listed is also checked against the client's
/// cgroup, see `CredentialServer`). Two entries for the same name must name disjoint, non-empty
/// unit sets, so that each request matches at most one entry.
public struct CredentialMap: Sendable {
    /// One credential name mapped to a stored key.
    public struct Entry: Sendable, Equatable {
        /// The credential name systemd asks for (`LoadCredential=`'s ID).
        public let credential: String
        /// The key of the value in the store.
        public let key: CredentialKey
        /// The allowed units; empty: every unit.
        public let units: Set<String>

        /// An entry; throws `invalidArgument` when `credential` is not a credential name
        /// (`isValidCredentialName`) or a unit is not a unit name (`isValidUnit`).
        public init(credential: String, key: CredentialKey, units: Set<String> = []) throws(CredentialVaultError) {
            guard CredentialMap.isValidCredentialName(credential) else {
                throw .invalidArgument("the credential name must be a file name without ',', ':' or control characters")
            }
            for unit in units where !CredentialMap.isValidUnit(unit) {
                throw .invalidArgument("'\(unit)' is not a unit name (non-empty, no '/', no control characters, at most 255 bytes)")
            }
            self.credential = credential
            self.key = key
            self.units = units
        }
    }

    /// The entries, in the order given.
    public let entries: [Entry]

    /// A map of `entries`; throws `invalidArgument` when there are none, or when two of them
    /// could answer the same request (the same name, unit sets not disjoint or empty).
    public init(entries: [Entry]) throws(CredentialVaultError) {
        guard !entries.isEmpty else { throw .invalidArgument("map at least one credential") }
        for (index, entry) in entries.enumerated() {
            for other in entries[..<index] where other.credential == entry.credential {
                if other.units.isEmpty || entry.units.isEmpty || !other.units.isDisjoint(with: entry.units) {
                    throw .invalidArgument("the credential \(entry.credential) is mapped twice for the same unit")
                }
            }
        }
        self.entries = entries
    }

    /// The entry answering `credential` for `unit`, if any.
    public func entry(credential: String, unit: String) -> Entry? {
        entries.first { $0.credential == credential && ($0.units.isEmpty || $0.units.contains(unit)) }
    }

    /// A credential name as systemd and this server take it: a valid file name
    /// (`SystemdCredentialNaming`) without `,` (the units' separator on the command line), `:`
    /// (`LoadCredential=`'s) or control characters.
    public static func isValidCredentialName(_ name: String) -> Bool {
        SystemdCredentialNaming.isValidName(name) && !name.contains(",") && !name.contains(":") && !CredentialKey.hasControlCharacter(name)
    }

    /// A unit name as it can appear in systemd's address: non-empty, at most 255 bytes, no `/`
    /// and no control character.
    public static func isValidUnit(_ unit: String) -> Bool {
        !unit.isEmpty && unit.utf8.count <= 255 && !unit.contains("/") && !CredentialKey.hasControlCharacter(unit)
    }
}
