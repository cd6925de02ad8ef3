import CredentialVault
import CredentialVaultTesting
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// The shared conformance suite against the Secret Service backend, on each provider: a real
/// gnome-keyring-daemon (the test process's session bus), KeePassXC and KWallet (each on a
/// private bus of its own, see `Provider`).
@Suite(.ownThread) struct SecretServiceConformanceTests {
    /// Each store sees only its own credentials (a unique service-name prefix); the suite
    /// deletes them afterwards. Reopening makes a new store, as a new process would.
    static func backend(_ provider: Provider) -> ConformanceBackend {
        ConformanceBackend(
            name: "secret-service (\(provider))",
            makeStore: { clock in
                StoreUnderTest(SecretServiceStore(configuration: provider.configuration(prefix: "cvconf-\(UUID().uuidString.prefix(8))/", clock: clock)))
            },
            reopen: { store, clock in
                var configuration = (store.sync as! SecretServiceStore).configuration
                configuration.clock = clock
                return StoreUnderTest(SecretServiceStore(configuration: configuration))
            },
            refusedNames: provider.refusedNames)
    }

    @Test(.privateKeyring, arguments: ConformanceCheck.allCases, ConformanceAPI.allCases)
    func gnomeKeyring(check: ConformanceCheck, api: ConformanceAPI) async throws {
        try await ConformanceSuite.run(check, on: Self.backend(.gnomeKeyring), through: api)
    }

    @Test(.sharedProvider(.keepassxc), arguments: ConformanceCheck.allCases, ConformanceAPI.allCases)
    func keepassxc(check: ConformanceCheck, api: ConformanceAPI) async throws {
        try await Self.run(check, on: .keepassxc, through: api)
    }

    @Test(.sharedProvider(.kwallet), arguments: ConformanceCheck.allCases, ConformanceAPI.allCases)
    func kwallet(check: ConformanceCheck, api: ConformanceAPI) async throws {
        try await Self.run(check, on: .kwallet, through: api)
    }

    /// Runs `check`; for the checks that need ephemeral credentials, also that the provider's
    /// capabilities say whether it has a `session` collection, and that without one the
    /// refusal (the suite's check) names the provider.
    static func run(_ check: ConformanceCheck, on provider: Provider, through api: ConformanceAPI) async throws {
        guard check.needsEphemeral else {
            try await ConformanceSuite.run(check, on: backend(provider), through: api)
            return
        }
        let store = SecretServiceStore(configuration: provider.configuration(prefix: "cvconf-\(UUID().uuidString.prefix(8))/"))
        defer { _ = try? store.deleteAll() }
        let status = try await store.status()
        #expect(status.supportsEphemeral == provider.hasSessionCollection)
        #expect(store.capabilities.supportsEphemeral == provider.hasSessionCollection)
        guard !provider.hasSessionCollection else {
            try await ConformanceSuite.run(check, on: backend(provider), through: api)
            return
        }
        let key = CredentialKey(service: "conformance.example", account: "alice")
        let refused = await #expect(throws: CredentialVaultError.self) {
            switch api {
            case .sync: try store.synchronous.save(Data("v".utf8), for: key, options: .ephemeral())
            case .async: try await store.save(Data("v".utf8), for: key, options: .ephemeral())
            }
        }
        guard case .unsupported(let why)? = refused else {
            Issue.record("an ephemeral save on \(provider) threw \(String(describing: refused)), not unsupported")
            return
        }
        #expect(why.contains("\(provider.identified) has no session collection"), "\(why)")
        #expect(try await store.load(key) == nil, "a refused save stored nothing")
    }
}
