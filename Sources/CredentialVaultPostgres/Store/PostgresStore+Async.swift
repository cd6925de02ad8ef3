import CredentialVault
import Foundation

/// The asynchronous storage protocol: round trips run on the store's threads (never on the
/// cooperative pool); a cached read is answered on the caller's thread.
extension PostgresStore: AsyncTokenStorageAdapter {
    /// Stores `value` (`.portable` or ephemeral; device-only is `unsupported`).
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try await observedOnThread { () throws(CredentialVaultError) in try self.blockingSave(value, for: key, options: options) }
    }

    /// The value of `key`, from the cache (without a hop) when it is known fresh.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        if let cached = try observed({ () throws(CredentialVaultError) in try cachedValue(key) }) { return cached }
        return try await observedOnThread { () throws(CredentialVaultError) in try self.blockingLoad(key) }
    }

    /// Reads and deletes `key`: single use across the fleet.
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await observedOnThread { () throws(CredentialVaultError) in try self.blockingTake(key) }
    }

    /// Deletes `key`.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        try await observedOnThread { () throws(CredentialVaultError) in try self.blockingDelete(key) }
    }

    /// The persistent keys.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        try await observedOnThread { () throws(CredentialVaultError) in try self.blockingListKeys(service: service) }
    }

    /// The metadata of `key`.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try await observedOnThread { () throws(CredentialVaultError) in try self.blockingMetadata(for: key) }
    }

    /// Deletes every credential (of `service`).
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        try await observedOnThread { () throws(CredentialVaultError) in try self.blockingDeleteAll(service: service) }
    }
}
