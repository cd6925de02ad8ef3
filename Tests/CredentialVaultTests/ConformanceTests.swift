import CredentialVault
import CredentialVaultConformance
import Foundation
import Testing

/// The shared conformance suite, run against the in-memory and sealed-file backends.
@Suite final class ConformanceTests {
    let dir = TempDirectory()

    static let backends: [ConformanceBackend] = [
        ConformanceBackend(name: "memory", makeStore: { clock in InMemoryStore(clock: clock) }, reopen: nil),
        ConformanceBackend(
            name: "sealed-file",
            makeStore: { clock in
                let dir = TempDirectory()
                return VaultInDirectory(store: try TestVault.create(dir, clock: clock), dir: dir)
            },
            reopen: { store, clock in
                let held = store as! VaultInDirectory
                let again = try SealedFileStore.open(
                    at: held.store.url, key: .passphrase(TestVault.passphrase),
                    configuration: TestVault.configuration(held.dir, clock: clock))
                return VaultInDirectory(store: again, dir: held.dir)
            }),
    ]

    @Test(arguments: backends, ConformanceCheck.allCases)
    func conformance(backend: ConformanceBackend, check: ConformanceCheck) throws {
        try ConformanceSuite.run(check, on: backend)
    }
}

/// A sealed-file store that keeps its temporary directory alive as long as it is used.
final class VaultInDirectory: TokenStorageAdapter {
    let store: SealedFileStore
    let dir: TempDirectory
    init(store: SealedFileStore, dir: TempDirectory) {
        self.store = store
        self.dir = dir
    }
    var capabilities: BackendCapabilities { store.capabilities }
    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try store.save(value, for: key, options: options)
    }
    func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? { try store.load(key) }
    func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? { try store.take(key) }
    func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool { try store.delete(key) }
    func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] { try store.listKeys(service: service) }
    func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? { try store.metadata(for: key) }
    func deleteAll(service: String?) throws(CredentialVaultError) -> Int { try store.deleteAll(service: service) }
}
