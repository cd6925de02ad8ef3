#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `AsyncTokenStorageAdapter` conformance: the reads run on the store's thread (`threads`), the caller
/// suspended; cancelled before a read started, it throws `cancelled` (a read has no effect to
/// complete). Writes throw at once, as the synchronous ones do.
extension SystemdCredentialStore: AsyncTokenStorageAdapter {
    /// See `save(_:for:options:)`: `unsupported`.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try synchronous.save(value, for: key, options: options)
    }

    /// See `load(_:)`.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try key.validate()
        return try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.load(key) }
    }

    /// See `take(_:)`: `unsupported`.
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try synchronous.take(key)
    }

    /// See `delete(_:)`: `unsupported`.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        try synchronous.delete(key)
    }

    /// See `listKeys(service:)`.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.listKeys(service: service) }
    }

    /// See `metadata(for:)`.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        return try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.metadata(for: key) }
    }

    /// See `deleteAll(service:)`: `unsupported`.
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        try synchronous.deleteAll(service: service)
    }
}
