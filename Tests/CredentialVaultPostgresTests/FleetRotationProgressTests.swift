import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

/// A long rotation reports its progress (on a terminal only, in the command line) and, cut off
/// before it commits, changes nothing.
@Suite(.ownThread, .enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetRotationProgressTests {
    func fleet(rows: Int) throws -> TestFleet {
        let fleet = try TestFleet(freshness: .zero)
        for i in 0..<rows {
            try fleet.store.synchronous.save(Data("value \(i)".utf8), for: CredentialKey(service: "svc", account: "a\(i)"), options: .portable)
        }
        return fleet
    }

    @Test func aRotationReportsEachRowWritten() throws {
        let fleet = try fleet(rows: 3)
        let seen = Mutex<[String]>([])
        _ = try fleet.store.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)]) { done, total in
            seen.withLock { $0.append("\(done)/\(total)") }
        }
        #expect(seen.withLock { $0 } == ["1/3", "2/3", "3/3"])
    }

    @Test func aRotationCutOffBeforeItCommitsChangesNothing() throws {
        let fleet = try fleet(rows: 3)
        let gate = try StatementGate()
        defer { gate.stop() }
        let early = try PostgresStore.open(fleet.configuration(through: gate), host: "test-host", secret: .keyFile(fleet.keys.keyFile))
        // The rotation's first re-sealed row on its way to the server (the old rows are deleted
        // in its transaction by then).
        gate.hold("fleet_records (name_hash, version, key_epoch, expires_at, sealed) VALUES")
        let keyFile = fleet.keys.keyFile
        let rotation = Background { thrownError { () throws(CredentialVaultError) in try early.rotateDataKey(hosts: ["test-host": .keyFile(keyFile)]) } }
        #expect(gate.held.waitBlocking(for: 1), "the rotation's first insert reached the gate")
        gate.stop()  // the process's connection is gone, as when it is killed or interrupted
        let outcome = try #require(rotation.value(), "the rotation ended")
        #expect(outcome != nil, "a rotation cut off is not reported done")
        let store = try fleet.reopen(freshness: .zero)
        #expect(store.keyEpoch == 1)
        #expect(try store.synchronous.listKeys().count == 3)
        #expect(try store.synchronous.load(CredentialKey(service: "svc", account: "a2")) == Data("value 2".utf8))
    }

    /// Each statement of a rotation has its own deadline, from when it is sent: the rotation as
    /// a whole may take many deadlines (10,000 rows did). Two of its statements are held, at two
    /// gates in a row, for most of a deadline each: together longer than one. (The waits are
    /// the time the property is about; each is well within a statement's deadline.)
    @Test func aRotationLongerThanOneStatementDeadlineCompletes() throws {
        let fleet = try fleet(rows: 3)
        let first = try StatementGate()
        defer { first.stop() }
        let second = try StatementGate(upstream: first.conninfo)
        defer { second.stop() }
        var configuration = fleet.configuration(through: second)
        configuration.statementTimeout = .seconds(2)  // a deadline of 3 s for each statement
        let store = try PostgresStore.open(configuration, host: "test-host", secret: .keyFile(fleet.keys.keyFile))
        first.hold("DELETE FROM \(fleet.schema).fleet_records")
        second.hold("DELETE FROM \(fleet.schema).fleet_hosts")
        let keyFile = fleet.keys.keyFile
        let rotation = Background { thrownError { () throws(CredentialVaultError) in try store.rotateDataKey(hosts: ["test-host": .keyFile(keyFile)]) } }
        for gate in [first, second] {
            #expect(gate.held.waitBlocking(for: 1), "the rotation's statement reached the gate")
            Thread.sleep(forTimeInterval: 2)
            gate.release()
        }
        let outcome = try #require(rotation.value(), "the rotation ended")
        #expect(outcome == nil, "the rotation completed: \(String(describing: outcome))")
        #expect(try fleet.reopen(freshness: .zero).keyEpoch == 2)
    }

    @Test func theCommandLineShowsProgressOnATerminalOnly() throws {
        let fleet = try fleet(rows: 2)
        let cli = fleet.commandLine
        let piped = try cli.run(["fleet", "rotate"], conninfo: fleet.conninfo)
        #expect(piped.status == 0 && !piped.stderr.contains("re-sealed") && !piped.stderr.contains("\r"), "\(piped)")
        // On a terminal (script(1) gives the command one): the line, then cleared.
        let command = ([FleetCommandLine.executable, "fleet", "rotate", "--key-file", fleet.keys.keyFile.path]).joined(separator: " ")
        let environment = [
            "CREDVAULT_POSTGRES": fleet.conninfo, "CREDVAULT_FLEET_SCHEMA": fleet.schema, "CREDVAULT_FLEET_HOST": "test-host",
            "PATH": "/usr/bin:/bin", "HOME": fleet.keys.url.path, "TERM": "dumb",
        ]
        let onTerminal = try FleetCommandLine.spawn("/usr/bin/script", ["-qefc", command, "/dev/null"], environment: environment, stdin: Data())
        #expect(onTerminal.status == 0 && onTerminal.stdout.contains("2/2 credentials re-sealed (100%)"), "\(onTerminal)")
        #expect(onTerminal.stdout.contains("data key rotated (epoch 3)"), "\(onTerminal)")
    }
}
