import CredentialVault

/// The asynchronous face of a store that `VaultOptions` opened, for the auth clients and the
/// migrator, which take only `AsyncTokenStorage`. `VaultOptions` hands out the synchronous
/// protocol because the vault commands use it; every backend of the package conforms to both.
enum AsyncStore {
    /// `store` through `AsyncTokenStorage`; `unsupported` for a backend without it.
    static func of(_ store: any TokenStorageAdapter) throws(CredentialVaultError) -> any AsyncTokenStorage {
        guard let asynchronous = store as? any AsyncTokenStorage else {
            throw .unsupported("this backend has no asynchronous API, which the auth and migrate commands need")
        }
        return asynchronous
    }
}
