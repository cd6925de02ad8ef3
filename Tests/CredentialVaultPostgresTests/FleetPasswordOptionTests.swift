import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Testing

/// The PostgreSQL password never goes on a command line: a password in `--postgres` is refused
/// (every local user can read /proc/PID/cmdline), and `--postgres-password-file` gives it.
@Suite(.ownThread) struct FleetPasswordOptionTests {
    @Test func aPasswordInThePostgresOptionIsRefusedWithoutBeingRepeated() throws {
        let keys = KeyFileDirectory()
        let cli = FleetCommandLine(schema: "credvault", keyFile: keys.keyFile, home: keys.url)
        for url in ["postgresql://postgres:Secret4x@localhost/fleet", "host=localhost user=postgres password=Secret4x dbname=fleet"] {
            let outcome = try cli.run(["fleet", "status", "--postgres", url], conninfo: "host=/nonexistent")
            #expect(outcome.status == 2, "\(outcome)")
            #expect(outcome.stderr.contains("--postgres-password-file") && !outcome.stderr.contains("Secret4x"), "\(outcome)")
        }
    }

    @Test(.enabled(if: TestCluster.tlsAvailable, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES_TLS)"))
    func aPasswordFileGivesThePasswordAndNothingElseDoes() throws {
        let tls = TestCluster.tlsConninfo!
        // The cluster's random password, out of its passfile (host:port:db:user:password).
        let passfile = try #require(tls.split(separator: " ").first { $0.hasPrefix("passfile=") }).dropFirst("passfile=".count)
        let password = try #require(try String(contentsOfFile: String(passfile), encoding: .utf8).split(separator: ":").last)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let withoutPassfile = tls.split(separator: " ").filter { !$0.hasPrefix("passfile=") }.joined(separator: " ")
        let keys = KeyFileDirectory()
        let passwordFile = keys.url.appendingPathComponent("pg.password")
        _ = FileManager.default.createFile(
            atPath: passwordFile.path, contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
        let cli = FleetCommandLine(schema: TestCluster.freshSchema(), keyFile: keys.keyFile, home: keys.url)
        let refused = try cli.run(["fleet", "init"], conninfo: withoutPassfile)
        #expect(refused.status == 9 && refused.stderr.contains("password"), "without a password the server refuses: \(refused)")
        let initialised = try cli.run(["fleet", "init", "--postgres-password-file", passwordFile.path], conninfo: withoutPassfile)
        #expect(initialised.status == 0, "\(initialised)")
        let status = try cli.run(["fleet", "status", "--postgres-password-file", passwordFile.path], conninfo: withoutPassfile)
        #expect(status.status == 0 && status.stdout.contains("key epoch: 1"), "\(status)")
    }
}
