import CredentialVault
import CredentialVaultConformance
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
            SecretServiceStore(
                configuration: SecretServiceConfiguration(
                    timeout: .seconds(10), serviceNamePrefix: "cvconf-\(UUID().uuidString.prefix(8))/", clock: clock))
        },
        reopen: { store, clock in
            var configuration = (store as! SecretServiceStore).configuration
            configuration.clock = clock
            return SecretServiceStore(configuration: configuration)
        })

    @Test(arguments: [backend], ConformanceCheck.allCases)
    func conformance(backend: ConformanceBackend, check: ConformanceCheck) throws {
        try ConformanceSuite.run(check, on: backend)
    }
}
