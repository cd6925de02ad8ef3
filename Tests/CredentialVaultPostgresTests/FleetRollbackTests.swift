import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTesting
import Foundation
import Testing

/// An older copy of the database put back (a restore by the administrator, or a removed host
/// writing back what it copied) is refused by every host that saw a newer state
/// (`rolledBack`), until a deliberate restore is accepted; rows changed without the data key
/// are noticed by every host (the generation moved past its seal).
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetRollbackTests {
    let alice = CredentialKey(service: "api.example", account: "alice")
    let bob = CredentialKey(service: "api.example", account: "bob")
    let verifier = CredentialKey(service: "pkce.example", account: "verifier")

    /// The administrator's copy of the store's tables (plain SQL, as a backup would be).
    func copy(_ fleet: TestFleet, as name: String) throws {
        try TestCluster.psql(
            """
            CREATE TABLE \(fleet.schema).\(name)_meta AS SELECT * FROM \(fleet.schema).fleet_meta;
            CREATE TABLE \(fleet.schema).\(name)_hosts AS SELECT * FROM \(fleet.schema).fleet_hosts;
            CREATE TABLE \(fleet.schema).\(name)_records AS SELECT * FROM \(fleet.schema).fleet_records
            """)
    }

    /// Puts the copy back over the live tables. `quietly`: as a superuser, with the triggers
    /// off (`session_replication_role = replica`), so the generation is exactly the copy's.
    /// Otherwise as the tables' owner would: records first (the trigger counts them), then the
    /// meta row with its guard (`fleet_meta_forward`) switched off, so that it ends exactly as
    /// copied too.
    func restore(_ fleet: TestFleet, from name: String, quietly: Bool) throws {
        let s = fleet.schema
        try TestCluster.psql(
            """
            BEGIN;
            \(quietly ? "SET LOCAL session_replication_role = replica;" : "")
            DELETE FROM \(s).fleet_records; INSERT INTO \(s).fleet_records SELECT * FROM \(s).\(name)_records;
            DELETE FROM \(s).fleet_hosts; INSERT INTO \(s).fleet_hosts SELECT * FROM \(s).\(name)_hosts;
            \(quietly ? "" : "ALTER TABLE \(s).fleet_meta DISABLE TRIGGER fleet_meta_forward;")
            UPDATE \(s).fleet_meta m SET key_epoch = c.key_epoch, generation = c.generation, state_seal = c.state_seal
                FROM \(s).\(name)_meta c;
            \(quietly ? "" : "ALTER TABLE \(s).fleet_meta ENABLE TRIGGER fleet_meta_forward;")
            COMMIT
            """)
    }

    @Test func aHostThatSawNewerStateRefusesARestoredCopyUntilItIsAccepted() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let store = fleet.store.synchronous
            try store.save(Data("alice-1".utf8), for: alice, options: .portable)
            try store.save(Data("bob".utf8), for: bob, options: .portable)
            try store.save(Data("once".utf8), for: verifier, options: .portable)
            try copy(fleet, as: "backup")
            do {
                // Another process of this host makes the newer state: the verifier taken, bob
                // revoked, alice changed.
                let writer = try fleet.reopen(freshness: .zero).synchronous
                #expect(try writer.take(verifier) == Data("once".utf8))
                #expect(try writer.delete(bob))
                try writer.save(Data("alice-2".utf8), for: alice, options: .portable)

                try restore(fleet, from: "backup", quietly: true)
                CustodySuite.expectRolledBack("a take of the restored verifier") { _ = try writer.take(verifier) }
                CustodySuite.expectRolledBack("a read of the revoked credential") { _ = try writer.load(bob) }
                CustodySuite.expectRolledBack("a read of the older value") { _ = try writer.load(alice) }
                CustodySuite.expectRolledBack("a list") { _ = try writer.listKeys() }
                CustodySuite.expectRolledBack("a write on top of it") { try writer.save(Data("x".utf8), for: alice, options: .portable) }
            }
            // The next process of this host (the one before has written its memory out).
            CustodySuite.expectRolledBack("the next open on this host") { _ = try fleet.reopen() }
            #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records)") == "3", "nothing was written over the copy")

            // What remains possible: a host that never saw the newer state believes the copy.
            #expect(try fleet.reopen(rememberingIn: KeyFileDirectory()).synchronous.load(bob) == Data("bob".utf8))

            // A deliberate restore, accepted on this host: the copy's state is the current one.
            let accepted = try fleet.acceptRestore()
            #expect(try accepted.synchronous.load(alice) == Data("alice-1".utf8))
            try accepted.synchronous.save(Data("alice-3".utf8), for: alice, options: .portable)
            #expect(try fleet.reopen(freshness: .zero).synchronous.load(alice) == Data("alice-3".utf8))
        }
    }

    @Test func aProcessThatSawNewerStateFollowsARestoreAcceptedByAnother() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("alice-1".utf8), for: alice, options: .portable)
            try copy(fleet, as: "backup")
            let running = try fleet.reopen(freshness: .zero)  // a long-lived process of this host
            try running.synchronous.save(Data("alice-2".utf8), for: alice, options: .portable)
            try restore(fleet, from: "backup", quietly: true)
            CustodySuite.expectRolledBack("before the restore is accepted") { _ = try running.synchronous.load(alice) }
            _ = try fleet.acceptRestore()
            // It follows the accepted state, and what it saw before does not undo the acceptance.
            #expect(try running.synchronous.load(alice) == Data("alice-1".utf8))
            try running.synchronous.save(Data("alice-3".utf8), for: alice, options: .portable)
            #expect(try fleet.reopen(freshness: .zero).synchronous.load(alice) == Data("alice-3".utf8))
        }
    }

    @Test func aRowPutBackWithoutTheKeyIsNoticedByEveryHost() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let store = fleet.store.synchronous
            try store.save(Data("once".utf8), for: verifier, options: .portable)
            try TestCluster.psql("CREATE TABLE \(fleet.schema).taken AS SELECT * FROM \(fleet.records)")
            #expect(try store.take(verifier) == Data("once".utf8))
            // The consumed row inserted again by the store's role (the trigger counts it).
            try TestCluster.psql("INSERT INTO \(fleet.records) SELECT * FROM \(fleet.schema).taken")
            #expect(throws: CredentialVaultError.tampered) { try store.take(verifier) }
            // Also on a host that never saw the take.
            #expect(throws: CredentialVaultError.tampered) { try fleet.reopen(rememberingIn: KeyFileDirectory()).synchronous.take(verifier) }
            #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records)") == "1", "not taken a second time")
        }
    }

    @Test func theStoresRoleCannotSetTheGenerationBackOverARowItPutBack() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let store = fleet.store.synchronous
            try store.save(Data("once".utf8), for: verifier, options: .portable)
            try store.save(Data("bob".utf8), for: bob, options: .portable)
            try TestCluster.psql("CREATE TABLE \(fleet.schema).copied AS SELECT * FROM \(fleet.records)")
            #expect(try store.take(verifier) == Data("once".utf8))
            #expect(try store.delete(bob))
            // A role with the privileges FLEET.md lists for the hosts (not the tables' owner).
            let role = "r_" + fleet.schema
            let s = fleet.schema
            try TestCluster.psql(
                """
                CREATE ROLE \(role) LOGIN; GRANT USAGE ON SCHEMA \(s) TO \(role); GRANT SELECT ON ALL TABLES IN SCHEMA \(s) TO \(role);
                GRANT INSERT, UPDATE, DELETE ON \(s).fleet_records TO \(role); GRANT UPDATE ON \(s).fleet_meta TO \(role);
                GRANT INSERT, DELETE ON \(s).fleet_hosts TO \(role)
                """)
            defer { _ = try? TestCluster.psql("DROP OWNED BY \(role); DROP ROLE \(role)") }
            // The consumed and the revoked rows put back, and the generation set back to the
            // sealed one the trigger moved it from.
            #expect(throws: TestFailure.self) {
                try TestCluster.psql(
                    """
                    BEGIN; INSERT INTO \(fleet.records) SELECT * FROM \(s).copied;
                    UPDATE \(s).fleet_meta SET generation = generation - 2; COMMIT
                    """, conninfo: fleet.conninfo + " user=\(role)")
            }
            #expect(try store.take(verifier) == nil, "taken once")
            #expect(try store.load(bob) == nil, "revoked")
            #expect(try fleet.reopen(rememberingIn: KeyFileDirectory()).synchronous.take(verifier) == nil, "taken once, on any host")
        }
    }

    @Test func aRemovedHostCannotWriteBackTheStateBeforeItsRemovalAndTheRotation() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let removed = KeyFileDirectory()
            try fleet.store.addHost("removed", secret: .keyFile(removed.keyFile))
            var removedConfiguration = fleet.configuration(freshness: .zero)
            removedConfiguration.stateDirectory = removed.url
            let before = try PostgresStore.open(removedConfiguration, host: "removed", secret: .keyFile(removed.keyFile))
            try before.synchronous.save(Data("old".utf8), for: alice, options: .portable)
            // While enrolled, it copies the tables with plain SELECTs.
            try copy(fleet, as: "stolen")

            #expect(try fleet.store.removeHost("removed"))
            let rotated = try fleet.store.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)])
            try rotated.synchronous.save(Data("new".utf8), for: alice, options: .portable)

            // It writes them back with its database password (the store's role: triggers on).
            try restore(fleet, from: "stolen", quietly: false)
            #expect(try TestCluster.psql("SELECT key_epoch FROM \(fleet.schema).fleet_meta") == "1")
            // Its old key opens the old epoch again, but no host that saw the rotation uses it.
            CustodySuite.expectRolledBack("the rotating process") { _ = try rotated.synchronous.load(alice) }
            CustodySuite.expectRolledBack("the rotating process's write") { try rotated.synchronous.save(Data("secret".utf8), for: bob, options: .portable) }
            CustodySuite.expectRolledBack("the next open on that host") { _ = try fleet.reopen() }
            #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records)") == "1", "no secret was sealed with the removed host's key")
        }
    }

    @Test func aStoreMadeBeforeTheStateSealIsSealedByItsFirstWrite() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("kept".utf8), for: alice, options: .portable)
            try TestCluster.psql("ALTER TABLE \(fleet.schema).fleet_meta DROP COLUMN state_seal")
            // A host that never opened it sealed (its own memory) opens it; the column comes back.
            let fresh = KeyFileDirectory()
            defer { withExtendedLifetime(fresh) {} }
            let store = try fleet.reopen(rememberingIn: fresh)
            #expect(try store.synchronous.load(alice) == Data("kept".utf8))
            #expect(try TestCluster.psql("SELECT state_seal IS NULL FROM \(fleet.schema).fleet_meta") == "t")
            try store.synchronous.save(Data("sealed".utf8), for: bob, options: .portable)
            #expect(try TestCluster.psql("SELECT length(state_seal) FROM \(fleet.schema).fleet_meta") == "32")
            // Sealed now: the seal taken away again is a rollback for this host.
            try TestCluster.psql("UPDATE \(fleet.schema).fleet_meta SET state_seal = NULL")
            CustodySuite.expectRolledBack("an unsealed state after a sealed one") { _ = try store.synchronous.load(alice) }
        }
    }

    @Test func acceptingTheDatabaseAsItIsSealsAStateChangedWithoutTheKey() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("alice".utf8), for: alice, options: .portable)
            try fleet.store.synchronous.save(Data("bob".utf8), for: bob, options: .portable)
            // A row deleted by hand (or written by a host from before the seal).
            try TestCluster.psql("DELETE FROM \(fleet.records) WHERE sealed = (SELECT sealed FROM \(fleet.records) LIMIT 1)")
            #expect(throws: CredentialVaultError.tampered) { try fleet.reopen(freshness: .zero) }
            let accepted = try fleet.acceptRestore()
            #expect(try accepted.synchronous.listKeys().count == 1)
            try accepted.synchronous.save(Data("carol".utf8), for: CredentialKey(service: "api.example", account: "carol"), options: .portable)
            #expect(try fleet.reopen(freshness: .zero).synchronous.listKeys().count == 2)
        }
    }

    @Test func theCommandLineRefusesAnOlderCopyWithExit13UntilFleetAcceptRestore() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let cli = fleet.commandLine
            let store = ["store", "--backend", "postgres", "--portable", "api.example", "deploy"]
            let lookup = ["lookup", "--backend", "postgres", "api.example", "deploy"]
            #expect(try cli.run(store, conninfo: fleet.conninfo, stdin: Data("v1".utf8)).status == 0)
            try copy(fleet, as: "backup")
            #expect(try cli.run(store, conninfo: fleet.conninfo, stdin: Data("v2".utf8)).status == 0)
            try restore(fleet, from: "backup", quietly: true)
            let refused = try cli.run(lookup, conninfo: fleet.conninfo)
            #expect(refused.status == 13 && refused.stderr.contains("credvault fleet accept-restore"), "\(refused)")
            #expect(refused.stdout.isEmpty)
            let accepted = try cli.run(["fleet", "accept-restore"], conninfo: fleet.conninfo)
            #expect(accepted.status == 0, "\(accepted)")
            #expect(try cli.run(lookup, conninfo: fleet.conninfo).stdout == "v1")
        }
    }
}
