#if Configuration
import Configuration
import CredentialVault

/// What the vault held under the mapping at one reload: each value in guarded memory
/// (`SecureBytes`), converted to the type a reader asks for only when it asks
/// (`SecretValueDecoding`). The guarded copies live as long as the last snapshot that holds
/// them (the provider's current one, or one a `ConfigSnapshotReader` still reads) and are wiped
/// when it is released: a value unchanged by a reload is shared by the old and the new snapshot,
/// a replaced or deleted one is wiped with the last snapshot that had it.
struct VaultConfigSnapshot: ConfigSnapshot {
    let providerName: String
    let mapping: VaultConfigKeyMapping
    let arraySeparator: Character
    /// The values by the UTF-8 bytes of their accounts (names compare by bytes).
    let values: [[UInt8]: SecureBytes]

    /// Every value is secret (`isSecret: true`), whatever the reader asked; a key the mapping
    /// cannot represent is absent (the next provider answers). Throws `invalidArgument` when the
    /// value cannot be read as `type` (never naming the value or the credential).
    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        guard let account = mapping.account(for: key) else { return LookupResult(encodedKey: key.description, value: nil) }
        guard let secret = values[Array(account.utf8)] else { return LookupResult(encodedKey: account, value: nil) }
        let content = try SecretValueDecoding.content(of: secret, as: type, arraySeparator: arraySeparator)
        return LookupResult(encodedKey: account, value: ConfigValue(content, isSecret: true))
    }

    /// Whether `key` has another value here than in `other` (added, changed or deleted).
    func differs(from other: VaultConfigSnapshot, at key: AbsoluteConfigKey) -> Bool {
        guard let account = mapping.account(for: key).map({ Array($0.utf8) }) else { return false }
        switch (values[account], other.values[account]) {
        case (nil, nil): return false
        case (let mine?, let theirs?): return !(mine === theirs || mine.constantTimeEquals(theirs))
        default: return true
        }
    }

    /// Whether any value differs from `other`'s.
    func differs(from other: VaultConfigSnapshot) -> Bool {
        guard values.count == other.values.count else { return true }
        for (account, mine) in values {
            guard let theirs = other.values[account], mine === theirs || mine.constantTimeEquals(theirs) else { return true }
        }
        return false
    }
}

extension VaultConfigSnapshot: CustomStringConvertible, CustomDebugStringConvertible {
    /// The number of values only: never a value or a credential name.
    var description: String { "\(providerName)[\(values.count) values]" }
    /// As `description`.
    var debugDescription: String { description }
}
#endif
