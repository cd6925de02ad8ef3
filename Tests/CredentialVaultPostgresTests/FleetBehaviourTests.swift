import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultPostgres
import Foundation
import Testing

/// What the fleet store refuses, its deadlines, and its schema rules.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetBehaviourTests {
    let key = CredentialKey(service: "api.example", account: "token")

    @Test func deviceOnlyIsUnsupportedAndStoresNothing() async throws {
        let fleet = try await offThePool { try TestFleet() }
        #expect {
            try fleet.store.synchronous.save(Data("v".utf8), for: key, options: .default)
        } throws: { error in
            guard case .unsupported = error as? CredentialVaultError else { return false }
            return true
        }
        let error = await thrownError { () async throws(CredentialVaultError) in
            try await fleet.store.save(Data("v".utf8), for: key, options: .default)
        }
        guard case .unsupported? = error else { return #expect(Bool(false), "device-only save: \(String(describing: error))") }
        #expect(try fleet.store.synchronous.load(key) == nil)
        #expect(!fleet.store.capabilities.supportsDeviceOnly)
    }

    @Test func ephemeralCredentialsArePurgedForEveryHost() async throws {
        try await offThePool {
            let clock = ManualClock()
            let fleet = try TestFleet(clock: clock, freshness: .zero)
            try fleet.store.synchronous.save(Data("pkce".utf8), for: key, options: .ephemeral(ttl: .seconds(60)))
            clock.advance(by: .seconds(61))
            // Another host opening the store purges expired rows.
            _ = try fleet.reopen(clock: clock)
            #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records)") == "0")
        }
    }

    /// A table the administrator keeps locked makes a read `busy` at the statement timeout,
    /// while the lock is still held.
    @Test func aLockedTableIsBusyWithinTheLockTimeout() async throws {
        // Created and filled with the default deadline (a loaded machine's DDL may take
        // seconds); only the reader under test has the short one, whose lock wait the server
        // ends (lock_timeout), not the client's clock.
        let fleet = try await offThePool { try TestFleet(freshness: .zero) }
        try fleet.store.synchronous.save(Data("v".utf8), for: key, options: .portable)
        let impatient = try await PostgresStore.open(
            fleet.configuration(freshness: .zero, statementTimeout: .milliseconds(300)), host: "test-host", secret: .keyFile(fleet.keys.keyFile))
        // The administrator locks the table from another session, until terminated.
        let holder = try LiveChild(
            URL(fileURLWithPath: "/usr/bin/psql"),
            [
                TestCluster.conninfo!, "-X", "-q", "-c",
                "BEGIN; LOCK TABLE \(fleet.records) IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600); COMMIT;",
            ],
            environment: ProcessInfo.processInfo.environment, stdin: .closed)
        let lockHolders =
            "SELECT pid FROM pg_locks WHERE relation = '\(fleet.records)'::regclass AND mode = 'AccessExclusiveLock' AND granted"
        defer {
            _ = try? TestCluster.psql("SELECT pg_terminate_backend(pid) FROM (\(lockHolders)) AS holders")
            holder.wait(within: 120)
        }
        let granted = "SELECT count(*) FROM (\(lockHolders)) AS holders"
        try await TestCluster.untilServer(answers: "1", to: granted)
        #expect(throws: CredentialVaultError.busy) { try impatient.synchronous.load(key) }
        #expect(try TestCluster.psql(granted) == "1", "busy came from the timeout: the table was still locked")
    }

    @Test func initRefusesAnExistingStoreAndOpenRefusesAnotherSchemaVersion() async throws {
        try await offThePool {
            let fleet = try TestFleet()
            #expect {
                try PostgresStore.initialize(fleet.configuration(), host: "other", secret: .keyFile(fleet.keys.keyFile))
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
            try TestCluster.psql("UPDATE \(fleet.schema).fleet_meta SET schema_version = 2")
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(fleet.configuration(), host: "test-host", secret: .keyFile(fleet.keys.keyFile))
            }
            guard case .unsupported? = error else { return #expect(Bool(false), "schema 2: \(String(describing: error))") }
        }
    }

    @Test func aMissingStoreOrHostIsAClearError() async throws {
        try await offThePool {
            let fleet = try TestFleet()
            var configuration = fleet.configuration()
            configuration.schema = "t_missing_store"
            let missing = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(configuration, host: "test-host", secret: .keyFile(fleet.keys.keyFile))
            }
            guard case .notAvailable(let why)? = missing else { return #expect(Bool(false), "missing: \(String(describing: missing))") }
            #expect(why.contains("fleet init"))
            let stranger = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(fleet.configuration(), host: "stranger", secret: .keyFile(fleet.keys.keyFile))
            }
            guard case .permissionDenied? = stranger else { return #expect(Bool(false), "stranger: \(String(describing: stranger))") }
            let wrong = KeyFileDirectory()
            #expect(throws: CredentialVaultError.wrongPassphrase) {
                try PostgresStore.open(fleet.configuration(), host: "test-host", secret: .keyFile(wrong.keyFile))
            }
        }
    }

    @Test func anUnreachableServerIsNotAvailable() async throws {
        try await offThePool {
            let configuration = PostgresConfiguration(
                connectionString: "host=127.0.0.1 port=1 user=postgres dbname=postgres", schema: "credvault", reconnectAttempts: 0)
            let error = thrownError { () throws(CredentialVaultError) in try PostgresStore.open(configuration, host: "h", secret: .passphrase("x")) }
            guard case .notAvailable? = error else { return #expect(Bool(false), "closed port: \(String(describing: error))") }
        }
    }

    @Test func aLostConnectionIsReconnected() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("v1".utf8), for: key, options: .portable)
            // The administrator ends every session of the store's connections (this test's only).
            try TestCluster.psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(fleet.schema)' AND pid <> pg_backend_pid()")
            #expect(try fleet.store.synchronous.load(key) == Data("v1".utf8))
            try fleet.store.synchronous.save(Data("v2".utf8), for: key, options: .portable)
            #expect(try fleet.store.synchronous.load(key) == Data("v2".utf8))
        }
    }
}
