import CredentialVault
import Foundation
import Synchronization

/// An in-memory store whose loads can be made to stall (suspended for an hour, ending
/// `cancelled` when their task is: as a slow backend behind the async API does), arriving at a
/// countdown when a stalled load begins. (The package's `FaultInjectingStore` does the same; the
/// benchmark does not link CredentialVaultTesting.)
final class StallingSessionStore: AsyncTokenStorageAdapter {
    private let base = InMemoryStore()
    private let stalling = Mutex<Countdown?>(nil)

    var capabilities: BackendCapabilities { base.capabilities }
    var defaultService: String { base.defaultService }

    /// From now on, every load stalls and arrives at `started` (`nil`: loads answer again).
    func stallLoads(arrivingAt started: Countdown?) { stalling.withLock { $0 = started } }

    func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        if let started = stalling.withLock({ $0 }) {
            started.arrive()
            do { try await Task.sleep(for: .seconds(3600)) } catch { throw .cancelled }
        }
        return try await base.load(key)
    }

    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try await base.save(value, for: key, options: options)
    }
    func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try await base.take(key) }
    func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool { try await base.delete(key) }
    func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] { try await base.listKeys(service: service) }
    func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? { try await base.metadata(for: key) }
    func deleteAll(service: String?) async throws(CredentialVaultError) -> Int { try await base.deleteAll(service: service) }
}
