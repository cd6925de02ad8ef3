import CredentialVault
import Foundation

/// The synchronous storage protocol: each call blocks the calling thread for its round trips
/// (bounded by the statement timeout, and by `connectTimeout` when a connection is made).
extension PostgresStore: TokenStorageAdapter {
    /// Stores `value` (`.portable` or ephemeral; device-only is `unsupported`).
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try observed { () throws(CredentialVaultError) in try blockingSave(value, for: key, options: options) }
    }

    /// The value of `key`, from the cache when it is known fresh.
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? { try observed { () throws(CredentialVaultError) in try blockingLoad(key) } }

    /// Reads and deletes `key` in one compare-and-swap: single use across the fleet.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? { try observed { () throws(CredentialVaultError) in try blockingTake(key) } }

    /// Deletes `key`.
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool { try observed { () throws(CredentialVaultError) in try blockingDelete(key) } }

    /// The persistent keys (every row is opened: names are sealed too).
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        try observed { () throws(CredentialVaultError) in try blockingListKeys(service: service) }
    }

    /// The metadata of `key`.
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try observed { () throws(CredentialVaultError) in try blockingMetadata(for: key) }
    }

    /// Deletes every credential (of `service`).
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int { try observed { () throws(CredentialVaultError) in try blockingDeleteAll(service: service) } }
}
