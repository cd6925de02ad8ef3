#if Configuration
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

/// Reads every configuration value of a mapping from a store, through the asynchronous
/// protocol (a backend's blocking work runs on its own threads, never on the cooperative pool).
enum VaultSnapshotReading {
    /// The values of the credentials of `mapping.service` that the mapping inverts
    /// (`VaultConfigKeyMapping.configKey(for:)`), by the bytes of their accounts, each copied
    /// into guarded memory and the loaded bytes wiped. A value equal to the one in `previous`
    /// keeps that one's guarded copy (shared, not copied again).
    ///
    /// Ephemeral credentials are never read: `listKeys` lists persistent credentials only, and
    /// the keys are listed again after the loads, so that a credential replaced by an ephemeral
    /// one meanwhile (no longer listed) is left out. A credential deleted or expired between
    /// the listing and its load is absent. Any other error ends the read (the caller keeps its
    /// previous snapshot): a partial snapshot would answer "absent" for values that exist.
    static func read(
        from store: any AsyncTokenStorageAdapter, mapping: VaultConfigKeyMapping, previous: [[UInt8]: SecureBytes]
    ) async throws(CredentialVaultError) -> [[UInt8]: SecureBytes] {
        let listed = try await configurationKeys(in: store, mapping: mapping)
        var values: [[UInt8]: SecureBytes] = [:]
        for credential in listed {
            if Task.isCancelled { throw .cancelled }
            let loaded: Data?
            do {
                loaded = try await store.load(credential)
            } catch .expired {
                continue
            }
            guard var data = loaded else { continue }
            let secret = data.withUnsafeBytes { SecureBytes(copying: $0) }
            data.resetBytes(in: 0..<data.count)
            let account = Array(credential.account.utf8)
            if let kept = previous[account], kept.constantTimeEquals(secret) {
                values[account] = kept
            } else {
                values[account] = secret
            }
        }
        let stillListed = Set(try await configurationKeys(in: store, mapping: mapping).map { Array($0.account.utf8) })
        return values.filter { stillListed.contains($0.key) }
    }

    /// The persistent credentials of the mapping's service that are configuration values.
    private static func configurationKeys(
        in store: any AsyncTokenStorageAdapter, mapping: VaultConfigKeyMapping
    ) async throws(CredentialVaultError) -> [CredentialKey] {
        try await store.listKeys(service: mapping.service).filter { mapping.configKey(for: $0) != nil }
    }
}
#endif
