import CredentialVault

extension ServiceCall {
    /// Handles the locked items `found` lists in each of `collections` (`lockedFound`: unlocked
    /// and the operation run again, or `locked` / `interactionRequired`); returns when there
    /// are none.
    func requireNoLocked(_ found: Found, in collections: String?...) throws(CredentialVaultError) {
        for collection in collections {
            let locked = found.locked(in: collection)
            if !locked.isEmpty { try lockedFound(items: locked, in: collection) }
        }
    }

    /// The item at `path` (in `collection`), found by a search, is missing from `GetSecrets`'
    /// answer. Returns when it was deleted meanwhile (the caller answers "none"); handles a
    /// lock (`lockedFound`); else its secret could not be read, which is never "not found"
    /// (`secretUnreadable`).
    func missingSecret(_ path: String, in collection: String) throws(CredentialVaultError) {
        guard let locked = try isLocked(item: path) else { return }
        let collectionLocked = try isLocked(collection: collection)
        if locked || collectionLocked { try lockedFound(items: [path], in: collection) }
        throw secretUnreadable()
    }

    /// `notAvailable` for a provider without a default collection, with what to do.
    func noDefaultCollection() -> CredentialVaultError {
        let advice =
            switch service.provider {
            case .kwallet:
                "KWallet makes a new wallet's collection available only once kwalletd restarts: log out and in again (or restart kwalletd)"
            case .keePassXC:
                "open a database in KeePassXC and expose a group of it (Database settings, Secret Service Integration)"
            case .gnomeKeyring, .other:
                "create a keyring and make it the default (log in to a desktop session once, or use seahorse)"
            }
        return .notAvailable("\(service.provider) answers but has no default collection (keyring) to store in yet: \(advice)")
    }

    /// `unsupported` for an ephemeral credential on a provider without a `session` collection.
    func noSessionCollection() -> CredentialVaultError {
        .unsupported(
            "\(service.provider) has no session collection (kept in memory only) for ephemeral credentials: "
                + "store the credential persistently, or use the memory or file backend")
    }
}
