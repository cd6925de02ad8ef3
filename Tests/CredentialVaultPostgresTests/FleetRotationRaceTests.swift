import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Testing

/// Writes and deletes of a process that opened the store before a rotation committed: each is
/// refused with `locked` (reopen), never acknowledged and lost, never reported "not found",
/// and nothing sealed under the old key lands in the table. The race is made exact by a gate
/// that holds the write's statement until the rotation has committed.
@Suite(.ownThread, .enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetRotationRaceTests {
    let key = CredentialKey(service: "api.example", account: "deploy")

    /// Saves `key` from a store opened before the rotation, its prepared statement `statement`
    /// held at a gate until another process's rotation has committed; returns what the save
    /// threw (`nil`: it was acknowledged) and the rotated store.
    func saveHeldAcrossRotation(_ fleet: TestFleet, holding statement: String) throws -> (CredentialVaultError?, PostgresStore) {
        let gate = try StatementGate()
        defer { gate.stop() }
        let early = try PostgresStore.open(fleet.configuration(through: gate), host: "test-host", secret: .keyFile(fleet.keys.keyFile))
        gate.holdPrepared(statement)
        let save = Background { thrownError { () throws(CredentialVaultError) in try early.synchronous.save(Data("new".utf8), for: key, options: .portable) } }
        #expect(gate.held.waitBlocking(for: 1), "the save's \(statement) reached the gate")
        let rotated = try fleet.rotateElsewhere()
        gate.release()
        return (try #require(save.value(), "the save ended"), rotated)
    }

    @Test func aSaveHeldUntilARotationCommitsIsRefusedAndLeavesNoOrphanRow() throws {
        let fleet = try TestFleet(freshness: .zero)
        let (outcome, rotated) = try saveHeldAcrossRotation(fleet, holding: "insert")
        #expect(outcome == .locked, "a write sealed with the retired key is refused: \(String(describing: outcome))")
        // Nothing under the old key landed: the store lists and rotates again.
        #expect(try rotated.synchronous.listKeys() == [])
        #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records) WHERE key_epoch <> 2") == "0")
        _ = try rotated.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)])
        // Reopened, the same save lands and reads back.
        let reopened = try fleet.reopen(freshness: .zero)
        try reopened.synchronous.save(Data("new".utf8), for: key, options: .portable)
        #expect(try reopened.synchronous.load(key) == Data("new".utf8))
    }

    @Test func anUpdateHeldUntilARotationCommitsIsRefused() throws {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("old".utf8), for: key, options: .portable)
        let (outcome, rotated) = try saveHeldAcrossRotation(fleet, holding: "update")
        #expect(outcome == .locked, "\(String(describing: outcome))")
        #expect(try rotated.synchronous.load(key) == Data("old".utf8), "the refused save changed nothing")
    }

    @Test func aDeleteAfterARotationIsRefusedNotReportedMissing() throws {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("revoke me".utf8), for: key, options: .portable)
        let early = try fleet.reopen(freshness: .zero)
        let rotated = try fleet.rotateElsewhere()
        // A revocation or sign-out must not silently do nothing.
        #expect(throws: CredentialVaultError.locked) { try early.synchronous.delete(key) }
        #expect(throws: CredentialVaultError.locked) { try early.synchronous.deleteAll() }
        #expect(throws: CredentialVaultError.locked) { try early.synchronous.take(key) }
        #expect(try rotated.synchronous.load(key) == Data("revoke me".utf8), "nothing was deleted")
        #expect(try fleet.reopen(freshness: .zero).synchronous.delete(key), "reopened, the delete deletes")
        #expect(try rotated.synchronous.load(key) == nil)
    }

    @Test func enrollingAHostAfterARotationIsRefused() throws {
        let fleet = try TestFleet(freshness: .zero)
        let early = try fleet.reopen(freshness: .zero)
        let rotated = try fleet.rotateElsewhere()
        // Its wrapping would be of the retired data key: acknowledged, and of no use.
        #expect(throws: CredentialVaultError.locked) {
            try early.addHost("web-9", secret: .passphrase("web-9 passphrase"), kdf: .insecureTestingOnly)
        }
        #expect(throws: CredentialVaultError.locked) { try early.removeHost("test-host") }
        #expect(try rotated.hosts().map(\.name) == ["test-host"])
    }

    @Test func aCommandLineStoreRacingARotationExitsLockedAndLosesNothing() throws {
        let fleet = try TestFleet(freshness: .zero)
        let gate = try StatementGate()
        defer { gate.stop() }
        gate.holdPrepared("insert")
        let cli = fleet.commandLine
        let store = Background {
            Result { try cli.run(["store", "--backend", "postgres", "--portable", "api.example", "deploy"], conninfo: gate.conninfo, stdin: Data("v1".utf8)) }
        }
        #expect(gate.held.waitBlocking(for: 1), "the command's INSERT reached the gate")
        let rotated = try fleet.rotateElsewhere()
        gate.release()
        let outcome = try #require(store.value()).get()
        // Exit 0 here would be an acknowledged write that no host can read.
        #expect(outcome.status == 10, "\(outcome)")
        #expect(outcome.stderr.contains("rotated") && !outcome.stderr.contains("unlock it"), "\(outcome)")
        #expect(try rotated.synchronous.listKeys() == [], "no orphan row: list and rotate still work")
        let again = try cli.run(["store", "--backend", "postgres", "--portable", "api.example", "deploy"], conninfo: fleet.conninfo, stdin: Data("v1".utf8))
        #expect(again.status == 0, "\(again)")
        #expect(try cli.run(["lookup", "--backend", "postgres", "api.example", "deploy"], conninfo: fleet.conninfo).stdout == "v1")
    }

    @Test func aCommandLineDeleteRacingARotationExitsLockedNotMissing() throws {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("revoke me".utf8), for: key, options: .portable)
        let gate = try StatementGate()
        defer { gate.stop() }
        // The delete by version that follows the command's read of the row.
        gate.holdPrepared("delete-version")
        let cli = fleet.commandLine
        let delete = Background { Result { try cli.run(["delete", "--backend", "postgres", "api.example", "deploy"], conninfo: gate.conninfo) } }
        #expect(gate.held.waitBlocking(for: 1), "the command's DELETE reached the gate")
        let rotated = try fleet.rotateElsewhere()
        gate.release()
        let outcome = try #require(delete.value()).get()
        // Exit 1 ("no credential") would be a false answer: the credential is there.
        #expect(outcome.status == 10 && outcome.stderr.contains("rotated"), "\(outcome)")
        #expect(try rotated.synchronous.load(key) == Data("revoke me".utf8))
        let again = try cli.run(["delete", "--backend", "postgres", "api.example", "deploy"], conninfo: fleet.conninfo)
        #expect(again.status == 0, "\(again)")
        #expect(try rotated.synchronous.load(key) == nil)
    }
}
