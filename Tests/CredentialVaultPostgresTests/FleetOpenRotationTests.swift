import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Testing

/// An open that a rotation commits in the middle of: it reads the store's epoch and this
/// host's wrapping in one snapshot, and opens again when the rotation lands after that read,
/// so an enrolled host is never told to enrol again and never gets a store already retired.
@Suite(.ownThread, .enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetOpenRotationTests {
    let key = CredentialKey(service: "api.example", account: "deploy")

    /// Opens the store through `gate`, holding the statement that contains `pattern` until a
    /// rotation (kept this host) has committed; `check` gets the open store (while the gate
    /// still forwards its connections).
    func openAcrossRotation(holding pattern: String, prepared: Bool, _ check: (PostgresStore) throws -> Void) throws {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("value".utf8), for: key, options: .portable)
        let gate = try StatementGate()
        defer { gate.stop() }
        if prepared { gate.holdPrepared(pattern) } else { gate.hold(pattern) }
        let configuration = fleet.configuration(through: gate)
        let keyFile = fleet.keys.keyFile
        let open = Background { Result { () throws(CredentialVaultError) in try PostgresStore.open(configuration, host: "test-host", secret: .keyFile(keyFile)) } }
        #expect(gate.held.waitBlocking(for: 1), "the open's statement reached the gate")
        _ = try fleet.rotateElsewhere()
        gate.release()
        let outcome = try #require(open.value(), "the open ended")
        try check(try outcome.get())
    }

    @Test func anOpenWhoseWrappingIsReadAfterARotationOpensTheNewKey() throws {
        try openAcrossRotation(holding: "fleet_hosts", prepared: false) { (store: PostgresStore) throws in
            #expect(store.keyEpoch == 2)
            #expect(try store.synchronous.load(key) == Data("value".utf8))
        }
    }

    @Test func anOpenThatARotationOvertakesBeforeItIsDoneOpensAgain() throws {
        // The open's statement after the unwrap: the count of expired rows, with the state.
        try openAcrossRotation(holding: "count", prepared: true) { (store: PostgresStore) throws in
            #expect(store.keyEpoch == 2, "the store returned is the current one, not one already retired")
            #expect(try store.synchronous.load(key) == Data("value".utf8))
            try store.synchronous.save(Data("after".utf8), for: key, options: .portable)
        }
    }
}
