import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Testing

/// What `credvault` says when the fleet store fails: the fleet's own words (a rotated key, a
/// row changed in the database, a PostgreSQL lock), never the sealed file's advice ("restore it
/// from a backup", "locked by another process", "unlock it").
@Suite(.ownThread, .enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetErrorWordingTests {
    let key = CredentialKey(service: "api.example", account: "deploy")

    /// The sealed file's phrases, none of which fits a fleet condition.
    static let fileWords = ["the vault", "restore it from a backup", "unlock it"]

    func expectFleetWording(_ outcome: FleetCommandLine.Outcome, status: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.status == status, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains("fleet store"), "\(outcome)", sourceLocation: sourceLocation)
        for words in Self.fileWords {
            #expect(!outcome.stderr.contains(words), "'\(words)' in \(outcome)", sourceLocation: sourceLocation)
        }
    }

    @Test func aRowChangedInTheDatabaseIsReportedAsOneRowNotADamagedVault() throws {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("value".utf8), for: key, options: .portable)
        // A row no host sealed (as a lost write under a retired key would have left).
        try TestCluster.psql(
            "INSERT INTO \(fleet.records) VALUES (decode(repeat('ab', 32), 'hex'), 1, 1, NULL, decode(repeat('cd', 64), 'hex'))")
        expectFleetWording(try fleet.commandLine.run(["list", "--backend", "postgres"], conninfo: fleet.conninfo), status: 5)
    }

    @Test func aMissingMetaRowIsReportedAsADamagedFleetStore() throws {
        let fleet = try TestFleet(freshness: .zero)
        try TestCluster.psql("DELETE FROM \(fleet.schema).fleet_meta")
        expectFleetWording(try fleet.commandLine.run(["lookup", "--backend", "postgres", "a", "b"], conninfo: fleet.conninfo), status: 5)
    }

    @Test func anotherKeyIsReportedAsThisHostsFleetKey() throws {
        let fleet = try TestFleet(freshness: .zero)
        let other = KeyFileDirectory()
        let cli = FleetCommandLine(schema: fleet.schema, keyFile: other.keyFile, home: other.url)
        expectFleetWording(try cli.run(["lookup", "--backend", "postgres", "a", "b"], conninfo: fleet.conninfo), status: 4)
    }

    @Test func aPostgreSQLLockHeldPastTheLockTimeoutIsReportedAsSuch() throws {
        let fleet = try TestFleet(freshness: .zero)
        let session = try HeldSession()
        defer { session.end() }
        // Held until the session ends: every change of a row waits for it.
        try session.run("BEGIN; LOCK TABLE \(fleet.records) IN SHARE MODE")
        let outcome = try fleet.commandLine.run(
            ["store", "--backend", "postgres", "--portable", "api.example", "deploy"], conninfo: fleet.conninfo, stdin: Data("v".utf8))
        expectFleetWording(outcome, status: 7)
        #expect(outcome.stderr.contains("PostgreSQL"), "\(outcome)")
    }
}

/// No error repeats the connection string: libpq quotes it in its own parse errors, and it may
/// hold a password.
@Suite(.ownThread) struct FleetConnectionStringSecrecyTests {
    static let malformed = [
        ("postgresql://postgres:S3cr%zzet@localhost/fleet", "S3cr"),
        ("postgresql://postgres:Secret4x@[::1:5432/fleet", "Secret4x"),
        ("postgresql://postgres:Secret4x@localhost:5432/fleet?sslmode", "Secret4x"),
        ("host=localhost password=Secret4x dbname='fleet", "Secret4x"),
    ]

    @Test(arguments: malformed) func aMalformedConnectionStringIsRefusedWithoutBeingRepeated(conninfo: String, secret: String) throws {
        let keys = KeyFileDirectory()
        let error = thrownError { () throws(CredentialVaultError) in try PostgresStore.open(PostgresConfiguration(connectionString: conninfo), host: "h", secret: .keyFile(keys.keyFile)) }
        let text = String(describing: error)
        #expect(!text.contains(secret) && !text.contains("postgresql://") && !text.contains("password="), "\(text)")
        guard case .invalidArgument = error else {
            Issue.record("a malformed connection string is the caller's mistake (invalidArgument): \(text)")
            return
        }
        let cli = FleetCommandLine(schema: "credvault", keyFile: keys.keyFile, home: keys.url)
        let outcome = try cli.run(["lookup", "--backend", "postgres", "a", "b"], conninfo: conninfo)
        #expect(outcome.status == 2 && !outcome.stderr.contains(secret) && !outcome.stderr.contains("postgresql://"), "\(outcome)")
    }
}
