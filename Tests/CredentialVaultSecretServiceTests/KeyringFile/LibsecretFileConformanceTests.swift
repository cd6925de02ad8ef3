import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTestSupport
import CredentialVaultTesting
import Foundation
import Testing

/// The shared conformance suite against libsecret's keyring file, through both APIs: each store
/// has a file of its own (a private temporary directory) and a password key source. One case at a
/// time: each new file costs a key derivation (PBKDF2, 100,000 iterations), and 44 of them at
/// once on a small machine keep the CPU from the heartbeat of `asyncDoesNotBlockThePool`.
@Suite(.ownThread, .serialized) struct LibsecretFileConformanceTests {
    static let backend = ConformanceBackend(
        name: "libsecret keyring file",
        makeStore: { clock in
            let directory = TempDirectory()
            let configuration = LibsecretFileConfiguration(
                path: directory.path("keyrings/default.keyring").path, keySource: .password(SecureBytes(copying: Array("pw".utf8))), clock: clock)
            return StoreUnderTest(try LibsecretFileStore(configuration: configuration), owner: directory)
        },
        reopen: { store, clock in
            var configuration = (store.sync as! LibsecretFileStore).configuration
            configuration.clock = clock
            return StoreUnderTest(try LibsecretFileStore(configuration: configuration), owner: store.owner)
        })

    @Test(arguments: ConformanceCheck.allCases, ConformanceAPI.allCases)
    func conformance(check: ConformanceCheck, api: ConformanceAPI) async throws {
        try await ConformanceSuite.run(check, on: Self.backend, through: api)
    }
}
