#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The asynchronous operations of a backend that implements the blocking ones: a third-party
/// backend writes its seven `TokenStorageAdapter` operations and declares
/// `extension MyStore: AsyncTokenStorageAdapter {}`; every async operation then runs its blocking twin
/// on a thread the library owns (`StoreThreads.blockingBackends`), the caller suspended, so it
/// never blocks Swift's cooperative pool or the main actor and passes the conformance suite's
/// `asyncDoesNotBlockThePool`.
///
/// Cancellation: a task cancelled before its operation started throws `cancelled` and the
/// operation never runs; once started, the blocking operation runs to its end (it has no way to
/// hear the cancellation), and its result is returned. A backend that can stop early, or that
/// answers from memory without blocking, implements the async operations itself: its own
/// implementations are used instead of these.
extension AsyncTokenStorageAdapter where Self: TokenStorageAdapter {
    /// `save(_:for:options:)` of the blocking API, on a library thread.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        let store = synchronous
        try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.save(value, for: key, options: options) }
    }

    /// `load(_:)` of the blocking API, on a library thread.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        let store = synchronous
        return try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.load(key) }
    }

    /// `take(_:)` of the blocking API, on a library thread.
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        let store = synchronous
        return try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.take(key) }
    }

    /// `delete(_:)` of the blocking API, on a library thread.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        let store = synchronous
        return try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.delete(key) }
    }

    /// `listKeys(service:)` of the blocking API, on a library thread.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        let store = synchronous
        return try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.listKeys(service: service) }
    }

    /// `metadata(for:)` of the blocking API, on a library thread.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        let store = synchronous
        return try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.metadata(for: key) }
    }

    /// `deleteAll(service:)` of the blocking API, on a library thread.
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        let store = synchronous
        return try await StoreThreads.blockingBackends.run { _ throws(CredentialVaultError) in try store.deleteAll(service: service) }
    }
}
