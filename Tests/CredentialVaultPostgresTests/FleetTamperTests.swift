import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultPostgres
import Foundation
import Testing

/// A database administrator edits the rows: every edit of a sealed row is `tampered`, never
/// wrong data. (Through the store's role an edit also moves the generation past its seal:
/// `FleetRollbackTests`.)
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetTamperTests {
    let alice = CredentialKey(service: "api.example", account: "alice")
    let bob = CredentialKey(service: "api.example", account: "bob")

    /// A store without a cache (every read goes to the server) holding alice and bob.
    func fleet() throws -> TestFleet {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("alice-secret".utf8), for: alice, options: .portable)
        try fleet.store.synchronous.save(Data("bob-secret".utf8), for: bob, options: .portable)
        return fleet
    }

    /// The name hash of the row whose version is `version` (alice: 1 then 2; bob: 1).
    func hex(_ fleet: TestFleet, where condition: String) throws -> String {
        try TestCluster.psql("SELECT encode(name_hash, 'hex') FROM \(fleet.records) WHERE \(condition) LIMIT 1")
    }

    @Test func nothingIsStoredInClear() async throws {
        try await offThePool {
            let fleet = try fleet()
            let dump = try TestCluster.psql("SELECT encode(name_hash, 'escape') || encode(sealed, 'escape') FROM \(fleet.records)")
            for word in ["api.example", "alice", "bob", "secret"] { #expect(!dump.contains(word), "\(word) is in clear in the table") }
        }
    }

    @Test func aChangedCiphertextIsTampered() async throws {
        try await offThePool {
            let fleet = try fleet()
            try TestCluster.psql(
                "UPDATE \(fleet.records) SET sealed = set_byte(sealed, 30, (get_byte(sealed, 30) + 1) % 256)")
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.load(alice) }
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.listKeys() }
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.take(alice) }
            #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records)") == "2", "a take of a tampered row deletes nothing")
        }
    }

    @Test func aChangedVersionIsTampered() async throws {
        try await offThePool {
            let fleet = try fleet()
            try TestCluster.psql("UPDATE \(fleet.records) SET version = version + 1")
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.load(alice) }
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.metadata(for: bob) }
            #expect(throws: CredentialVaultError.tampered) {
                try fleet.store.synchronous.save(Data("new".utf8), for: alice, options: .portable)
            }
        }
    }

    @Test func aRowSetToANewerEpochThanTheStoresIsTamperedNotARotation() async throws {
        try await offThePool {
            let fleet = try fleet()
            // As a superuser, without the triggers: the state still matches its seal, and only
            // the rows say a newer epoch than the meta row of the same snapshot.
            try TestCluster.psql(
                "BEGIN; SET LOCAL session_replication_role = replica; UPDATE \(fleet.records) SET key_epoch = key_epoch + 1; COMMIT")
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.load(alice) }
            #expect(throws: CredentialVaultError.tampered) { try fleet.reopen(freshness: .zero).synchronous.listKeys() }
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)]) }
        }
    }

    @Test func aChangedKeyHashIsTampered() async throws {
        try await offThePool {
            let fleet = try fleet()
            let bobHash = try fleet.store.synchronous.load(bob).map { _ in try hex(fleet, where: "true") }
            #expect(bobHash != nil)
            // alice's row moved to another (unused) record id: listed rows no longer open.
            try TestCluster.psql("UPDATE \(fleet.records) SET name_hash = sha256(name_hash) WHERE sealed = (SELECT sealed FROM \(fleet.records) ORDER BY name_hash LIMIT 1)")
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.listKeys() }
        }
    }

    @Test func swappedRowsAreTampered() async throws {
        try await offThePool {
            let fleet = try fleet()
            // Swap the sealed records (and versions) of the two rows: each name now finds the other's row.
            try TestCluster.psql(
                """
                WITH a AS (SELECT name_hash, version, sealed FROM \(fleet.records) ORDER BY name_hash LIMIT 1),
                     b AS (SELECT name_hash, version, sealed FROM \(fleet.records) ORDER BY name_hash DESC LIMIT 1)
                UPDATE \(fleet.records) r SET sealed = CASE WHEN r.name_hash = a.name_hash THEN b.sealed ELSE a.sealed END,
                    version = CASE WHEN r.name_hash = a.name_hash THEN b.version ELSE a.version END
                FROM a, b WHERE r.name_hash IN (a.name_hash, b.name_hash)
                """)
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.load(alice) }
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.load(bob) }
        }
    }

    @Test func aRowFromAnotherStoreIsTampered() async throws {
        try await offThePool {
            let fleet = try fleet()
            let other = try TestFleet(freshness: .zero)
            try other.store.synchronous.save(Data("other-store".utf8), for: alice, options: .portable)
            // The other store's row replaces this one's (same name, other store id and key).
            try TestCluster.psql(
                "UPDATE \(fleet.records) SET sealed = (SELECT sealed FROM \(other.records)), version = (SELECT version FROM \(other.records))")
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.listKeys() }
        }
    }

    @Test func anEphemeralRowMadePersistentIsTampered() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("state".utf8), for: alice, options: .ephemeral())
            #expect(try fleet.store.synchronous.listKeys().isEmpty)
            try TestCluster.psql("UPDATE \(fleet.records) SET expires_at = NULL")
            #expect(throws: CredentialVaultError.tampered) { try fleet.store.synchronous.listKeys() }
        }
    }

    @Test func aChangedHostWrappingDoesNotOpen() async throws {
        try await offThePool {
            let fleet = try fleet()
            try TestCluster.psql("UPDATE \(fleet.schema).fleet_hosts SET key_epoch = key_epoch, salt = sha256(salt)")
            #expect(throws: CredentialVaultError.wrongPassphrase) { try fleet.reopen() }
        }
    }
}
