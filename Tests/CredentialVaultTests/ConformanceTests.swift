import CredentialVault
import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

/// The shared conformance suite, run against the in-memory and sealed-file backends through
/// both storage protocols.
@Suite(.ownThread) struct ConformanceTests {
    static let backends: [ConformanceBackend] = [
        ConformanceBackend(name: "memory", makeStore: { clock in StoreUnderTest(InMemoryStore(clock: clock)) }, reopen: nil),
        ConformanceBackend(
            name: "sealed-file",
            makeStore: { clock in
                let dir = TempDirectory()
                return StoreUnderTest(try TestVault.create(dir, clock: clock), owner: dir)
            },
            reopen: { store, clock in
                let dir = store.owner as! TempDirectory
                let url = (store.sync as! SealedFileStore).url
                let again = try SealedFileStore.open(
                    at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, clock: clock))
                return StoreUnderTest(again, owner: dir)
            }),
        // The fault-injecting store of the testing product, with no fault armed, is a store too.
        ConformanceBackend(
            name: "fault-injecting (no fault)",
            makeStore: { clock in StoreUnderTest(FaultInjectingStore(wrapping: InMemoryStore(clock: clock))) }, reopen: nil),
    ]

    @Test(arguments: backends, ConformanceCheck.allCases)
    func conformanceThroughTheSyncAPI(backend: ConformanceBackend, check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: backend, through: .sync)
    }

    @Test(arguments: backends, ConformanceCheck.allCases)
    func conformanceThroughTheAsyncAPI(backend: ConformanceBackend, check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: backend, through: .async)
    }
}
