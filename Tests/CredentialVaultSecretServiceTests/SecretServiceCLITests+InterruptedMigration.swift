import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `credvault migrate` stopped half-way: killed (SIGKILL, no cleanup at all) or interrupted
/// (SIGINT, as by Ctrl-C), every credential is in the keyring or in the file with its value,
/// and a rerun completes the migration.
extension SecretServiceCLITests {
    /// The credentials migrated, with names long enough that few of their stdout lines fit in
    /// the child's one-page stdout pipe plus what the test has read: a child sent its signal
    /// after `signalAfter` lines has then reported at most `signalAfter + 70` of them (it blocks
    /// writing to the pipe otherwise), fewer than `count`, whatever the machine's speed.
    struct LongNamedCredentials {
        let service = "cvtest-stop-\(UUID().uuidString.prefix(8))"
        let count = 120
        let signalAfter = 20

        func key(_ i: Int) -> CredentialKey {
            CredentialKey(service: service, account: String(format: "account-%03d-", i) + String(repeating: "x", count: 120))
        }
        func value(_ i: Int) -> Data { Data("value \(i)".utf8) + Data([0, 0xFF, UInt8(i % 256)]) }
    }

    /// Runs `credvault migrate --from secret-service --to file` of `credentials` (stored in the
    /// keyring first) and sends `signal` once it reported `signalAfter` credentials moved.
    /// Returns its wait status, its stderr, and the credentials it reported moved.
    func migrate(_ credentials: LongNamedCredentials, stoppedBy signal: Int32) throws -> (status: Int32, stderr: String, reported: Int) {
        let keyring = TestEnvironment.unscopedStore()
        for i in 0..<credentials.count { try keyring.save(credentials.value(i), for: credentials.key(i)) }
        let errors = home.appendingPathComponent("migrate-stderr")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let child = try LiveChild(
            URL(fileURLWithPath: Self.credvaultPath), ["migrate", "--from", "secret-service", "--to", "file", "--service", credentials.service],
            environment: CLIChild.inherited(environment), stdoutCapacity: 4096, stderr: errors)
        var reported = 0
        while reported < credentials.signalAfter, let line = child.nextLine(within: 120) {
            if line.hasPrefix("migrated\t") { reported += 1 }
        }
        kill(child.pid, signal)
        while let line = child.nextLine(within: 120) {
            if line.hasPrefix("migrated\t") { reported += 1 }
        }
        let status = child.wait(within: 120)
        return (status, (try? String(contentsOf: errors, encoding: .utf8)) ?? "", reported)
    }

    /// Every credential is in the keyring or in the file with its value; returns how many are
    /// in the file, and how many in both.
    func checkNothingLost(_ credentials: LongNamedCredentials) throws -> (inFile: Int, inBoth: Int) {
        let keyring = TestEnvironment.unscopedStore()
        let vault = try openVault()
        var inFile = 0, inBoth = 0
        for i in 0..<credentials.count {
            let left = try keyring.load(credentials.key(i))
            let moved = try vault.load(credentials.key(i))
            #expect(left != nil || moved != nil, "credential \(i) was lost")
            if let left { #expect(left == credentials.value(i)) }
            if let moved { #expect(moved == credentials.value(i)); inFile += 1 }
            if left != nil && moved != nil { inBoth += 1 }
        }
        return (inFile, inBoth)
    }

    /// A rerun moves the rest: the keyring keeps none, the file has every one with its value.
    func checkARerunCompletes(_ credentials: LongNamedCredentials) throws {
        let rerun = try credvault(["migrate", "--from", "secret-service", "--to", "file", "--service", credentials.service])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try TestEnvironment.unscopedStore().listKeys(service: credentials.service) == [])
        let vault = try openVault()
        #expect(try vault.listKeys(service: credentials.service).count == credentials.count)
        for i in 0..<credentials.count { #expect(try vault.load(credentials.key(i)) == credentials.value(i)) }
    }

    @Test func migrationKilledHalfWayLosesNothingAndARerunCompletes() throws {
        let credentials = LongNamedCredentials()
        defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: credentials.service) }
        let run = try migrate(credentials, stoppedBy: SIGKILL)
        #expect(LiveChild.signal(run.status) == SIGKILL, "the migration was still running when killed")
        let (inFile, _) = try checkNothingLost(credentials)
        #expect(inFile >= credentials.signalAfter && inFile < credentials.count, "killed half-way: \(inFile) of \(credentials.count) moved")
        try checkARerunCompletes(credentials)
    }

    /// SIGINT stops the migration after the credential in hand: it exits 130 saying how far it
    /// got, every credential it reported is in the file only, the others in the keyring only.
    @Test func migrationInterruptedStopsBetweenTwoCredentialsAndARerunCompletes() throws {
        let credentials = LongNamedCredentials()
        defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: credentials.service) }
        let run = try migrate(credentials, stoppedBy: SIGINT)
        #expect(LiveChild.exitCode(run.status) == 128 + SIGINT, "stopped by itself, not by the signal: \(run.stderr)")
        #expect(run.stderr.contains("interrupted after \(run.reported) of \(credentials.count) credential(s)"), "\(run.stderr)")
        #expect(run.stderr.contains("run the same command again to finish"), "\(run.stderr)")
        let (inFile, inBoth) = try checkNothingLost(credentials)
        #expect(inFile == run.reported && inBoth == 0, "stopped between two credentials: \(inFile) moved, \(run.reported) reported, \(inBoth) in both")
        #expect(inFile >= credentials.signalAfter && inFile < credentials.count, "interrupted half-way: \(inFile) of \(credentials.count) moved")
        try checkARerunCompletes(credentials)
    }
}
