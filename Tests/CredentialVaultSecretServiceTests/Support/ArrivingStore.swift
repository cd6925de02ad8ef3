import CredentialVault
import CredentialVaultTestSupport
import Foundation

/// Forwards to `base`, arriving at `saves` as each save begins: a test knows that an operation
/// has reached the store (and is in whatever `base` does, a stall for example) without polling.
final class ArrivingStore: AsyncTokenStorageAdapter {
    let base: any AsyncTokenStorageAdapter
    /// One arrival per save called.
    let saves = Arrivals()

    init(_ base: any AsyncTokenStorageAdapter) { self.base = base }

    var capabilities: BackendCapabilities { base.capabilities }
    var defaultService: String { base.defaultService }

    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        saves.arrive()
        try await base.save(value, for: key, options: options)
    }

    func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try await base.load(key) }
    func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try await base.take(key) }
    func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool { try await base.delete(key) }
    func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] { try await base.listKeys(service: service) }
    func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? { try await base.metadata(for: key) }
    func deleteAll(service: String?) async throws(CredentialVaultError) -> Int { try await base.deleteAll(service: service) }
}
