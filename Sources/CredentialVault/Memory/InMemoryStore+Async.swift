#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `AsyncTokenStorageAdapter` conformance. Everything is in memory behind one short lock, so every
/// operation is answered on the caller's thread: nothing blocks, nothing hops.
extension InMemoryStore: AsyncTokenStorageAdapter {
    /// See `save(_:for:options:)`.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try synchronous.save(value, for: key, options: options)
    }

    /// See `load(_:)`.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try synchronous.load(key) }

    /// See `take(_:)`.
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try synchronous.take(key) }

    /// See `delete(_:)`.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool { try synchronous.delete(key) }

    /// See `listKeys(service:)`.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        try synchronous.listKeys(service: service)
    }

    /// See `metadata(for:)`.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try synchronous.metadata(for: key)
    }

    /// See `deleteAll(service:)`.
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int { try synchronous.deleteAll(service: service) }
}
