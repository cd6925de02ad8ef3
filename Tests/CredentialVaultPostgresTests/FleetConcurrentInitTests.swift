import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Testing

/// Two hosts running `credvault fleet init` on one schema at the same time: the one that
/// loses is told the store exists (`alreadyExists`, exit 2), as when it comes second, never an
/// unexplained `io` error. PostgreSQL reports the schema created by a transaction still open
/// when the loser's `CREATE SCHEMA` arrived as a unique violation (23505), not as 42P06.
/// Ordered on the server: the loser provably waits for the winner's transaction
/// (`pg_stat_activity`) before the winner commits.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetConcurrentInitTests {
    @Test func anInitThatLosesTheRaceForItsSchemaSaysTheStoreExists() async throws {
        let schema = TestCluster.freshSchema()
        let keys = KeyFileDirectory()
        var configuration = PostgresConfiguration(connectionString: TestCluster.conninfo! + " application_name=\(schema)", schema: schema)
        configuration.stateDirectory = keys.url
        defer { _ = try? TestCluster.psql("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        // The winner: its schema made, its transaction still open.
        let winner = try HeldSession()
        try winner.run("BEGIN; CREATE SCHEMA \(schema)")
        let loser = Background { [configuration] in
            Result { () throws(CredentialVaultError) in
                _ = try PostgresStore.initialize(configuration, host: "late-host", secret: .keyFile(keys.keyFile), kdf: .insecureTestingOnly)
            }
        }
        try await TestCluster.untilServer(
            answers: "1", to: "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(schema)' AND wait_event_type = 'Lock'")
        try winner.run("COMMIT")
        winner.end()
        let outcome = try #require(loser.value(), "the losing init ended")
        guard case .failure(.alreadyExists(let what)) = outcome else {
            Issue.record("expected alreadyExists, got \(outcome)")
            return
        }
        #expect(what.contains(schema))
    }
}
