import CredentialVault
import CredentialVaultTesting
import CredentialVaultSecretService
import Foundation
import Testing

/// The shared conformance suite against the Secret Service backend (a real gnome-keyring-daemon).
@Suite(.privateKeyring)
struct SecretServiceConformanceTests {
    /// Each store sees only its own credentials (a unique service-name prefix); the suite
    /// deletes them afterwards. Reopening makes a new store, as a new process would.
    static let backend = ConformanceBackend(
        name: "secret-service",
        makeStore: { clock in
            StoreUnderTest(
                SecretServiceStore(
                    configuration: SecretServiceConfiguration(
                        timeout: .seconds(10), serviceNamePrefix: "cvconf-\(UUID().uuidString.prefix(8))/", clock: clock)))
        },
        reopen: { store, clock in
            var configuration = (store.sync as! SecretServiceStore).configuration
            configuration.clock = clock
            return StoreUnderTest(SecretServiceStore(configuration: configuration))
        })

    @Test(arguments: [backend], ConformanceCheck.allCases)
    func conformanceThroughTheSyncAPI(backend: ConformanceBackend, check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: backend, through: .sync)
    }

    @Test(arguments: [backend], ConformanceCheck.allCases)
    func conformanceThroughTheAsyncAPI(backend: ConformanceBackend, check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: backend, through: .async)
    }
}
