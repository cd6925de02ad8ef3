import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTesting
import Foundation
import Testing

/// The shared conformance suite against a real PostgreSQL, through both storage protocols.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetConformanceTests {
    static let backend = ConformanceBackend(
        name: "postgres",
        makeStore: { clock in
            let fleet = try TestFleet(clock: clock)
            return StoreUnderTest(fleet.store, owner: fleet)
        },
        reopen: { store, clock in
            let fleet = store.owner as! TestFleet
            return StoreUnderTest(try fleet.reopen(clock: clock), owner: fleet)
        })

    @Test(arguments: ConformanceCheck.allCases)
    func conformanceThroughTheSyncAPI(check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: Self.backend, through: .sync)
    }

    @Test(arguments: ConformanceCheck.allCases)
    func conformanceThroughTheAsyncAPI(check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: Self.backend, through: .async)
    }
}
