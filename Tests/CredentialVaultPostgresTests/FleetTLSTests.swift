import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultPostgres
import Foundation
import Testing

/// The TLS + scram-sha-256 cluster: verify-full connects; a wrong CA or password is a clear,
/// typed error.
@Suite(.enabled(if: TestCluster.tlsAvailable, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES_TLS)"))
struct FleetTLSTests {
    var conninfo: String { TestCluster.tlsConninfo! }

    @Test func verifyFullAndScramConnect() async throws {
        try await offThePool {
            let fleet = try TestFleet(conninfo: conninfo)
            let key = CredentialKey(service: "tls.example", account: "k")
            try fleet.store.synchronous.save(Data("over tls".utf8), for: key, options: .portable)
            #expect(try fleet.reopen().synchronous.load(key) == Data("over tls".utf8))
            // The server sees the store's sessions over TLS 1.3 and nothing else.
            let tls = try TestCluster.psql(
                "SELECT count(*) FILTER (WHERE NOT s.ssl), count(*) FILTER (WHERE s.ssl) > 0 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '\(fleet.schema)'",
                conninfo: conninfo)
            #expect(tls == "0|t")
        }
    }

    @Test func aWrongCAIsAClearError() async throws {
        try await offThePool {
            // Another CA (a fresh one the server's certificate was not issued by).
            let dir = KeyFileDirectory()
            let ca = dir.url.appendingPathComponent("other-ca.crt")
            let openssl = try CLIChild.run(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=other-ca",
                    "-keyout", dir.url.appendingPathComponent("other-ca.key").path, "-out", ca.path,
                ])
            try #require(openssl.status == 0, "openssl: \(openssl.stderr)")
            let wrongCA = conninfo.replacingOccurrences(
                of: #"sslrootcert=\S+"#, with: "sslrootcert=\(ca.path)", options: .regularExpression)
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(PostgresConfiguration(connectionString: wrongCA), host: "h", secret: .passphrase("x"))
            }
            guard case .permissionDenied(let why)? = error else { return #expect(Bool(false), "wrong CA: \(String(describing: error))") }
            #expect(why.contains("TLS verification failed") && why.contains("certificate verify failed"), "\(why)")
        }
    }

    @Test func aWrongPasswordIsAClearError() async throws {
        try await offThePool {
            let wrongPassword = conninfo.replacingOccurrences(of: #"passfile=\S+"#, with: "password=wrong-password", options: .regularExpression)
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(PostgresConfiguration(connectionString: wrongPassword), host: "h", secret: .passphrase("x"))
            }
            guard case .permissionDenied(let why)? = error else { return #expect(Bool(false), "wrong password: \(String(describing: error))") }
            #expect(why.contains("refused the password"))
            #expect(!why.contains("wrong-password"), "the error repeats the password")
        }
    }

    @Test func withoutTLSTheServerRefuses() async throws {
        try await offThePool {
            var plain = PostgresConfiguration(connectionString: conninfo.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=disable"))
            plain.insecureTransport = true
            let error = thrownError { () throws(CredentialVaultError) in try PostgresStore.open(plain, host: "h", secret: .passphrase("x")) }
            guard case .permissionDenied? = error else { return #expect(Bool(false), "no TLS: \(String(describing: error))") }
        }
    }

    /// The string without `sslmode`, and with a CA file that is not there: libpq's own default
    /// (`prefer`) would connect without checking the server.
    var withoutSSLMode: String {
        conninfo.replacingOccurrences(of: "sslmode=verify-full", with: "")
            .replacingOccurrences(of: #"sslrootcert=\S+"#, with: "sslrootcert=/nonexistent/credvault-ca.crt", options: .regularExpression)
    }

    @Test func overTCPWithoutAnSSLModeTheServerIsVerified() async throws {
        try await offThePool {
            let configuration = PostgresConfiguration(connectionString: withoutSSLMode, schema: TestCluster.freshSchema())
            #expect(configuration.transportWarning == nil)
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.initialize(configuration, host: "h", secret: .passphrase("x"), kdf: .insecureTestingOnly)
            }
            guard case .permissionDenied(let why)? = error else { return #expect(Bool(false), "unverified: \(String(describing: error))") }
            #expect(why.contains("TLS verification failed"), "\(why)")
            #expect(!why.contains("passfile") && !why.contains(withoutSSLMode), "the error repeats the connection string")
        }
    }

    @Test func aWeakerSSLModeOverTCPNeedsTheExplicitOptionAndIsWarnedAbout() async throws {
        try await offThePool {
            var configuration = PostgresConfiguration(
                connectionString: conninfo.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=require"), schema: TestCluster.freshSchema())
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.initialize(configuration, host: "h", secret: .passphrase("x"), kdf: .insecureTestingOnly)
            }
            guard case .invalidArgument(let why)? = error else { return #expect(Bool(false), "require: \(String(describing: error))") }
            #expect(why.contains("verify-full") && why.contains("insecureTransport") && !why.contains("passfile"), "\(why)")
            configuration.insecureTransport = true
            configuration.stateDirectory = nil  // this test's memory of the store: in the process
            let store = try PostgresStore.initialize(configuration, host: "h", secret: .passphrase("x"), kdf: .insecureTestingOnly)
            try store.synchronous.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
            #expect(configuration.transportWarning?.contains("sslmode=require") == true)
        }
    }

    @Test func theCommandLineNeedsInsecureTransportForAWeakerModeAndWarns() async throws {
        try await offThePool {
            let keys = KeyFileDirectory()
            let cli = FleetCommandLine(schema: TestCluster.freshSchema(), keyFile: keys.keyFile, home: keys.url)
            let weak = conninfo.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=require")
            let refused = try cli.run(["fleet", "init"], conninfo: weak)
            #expect(refused.status != 0 && refused.stderr.contains("--insecure-transport") && !refused.stderr.contains("passfile"), "\(refused)")
            let allowed = try cli.run(["fleet", "init", "--insecure-transport"], conninfo: weak)
            #expect(allowed.status == 0 && allowed.stderr.contains("warning:") && allowed.stderr.contains("sslmode=require"), "\(allowed)")
            let verified = try cli.run(["fleet", "status"], conninfo: conninfo)
            #expect(verified.status == 0 && !verified.stderr.contains("warning"), "\(verified)")
        }
    }

    /// A connection named by a service (`service=fleet`, its host and port in the user's
    /// `~/.pg_service.conf`, with no sslmode there): libpq's own default for the file's TCP
    /// host would be `prefer`, which connects without checking the server.
    @Test func aServiceWithoutAnSSLModeIsVerifiedToo() async throws {
        try await offThePool {
            let keys = KeyFileDirectory()
            let service = conninfo.split(separator: " ").filter { !$0.hasPrefix("sslmode=") && !$0.hasPrefix("sslrootcert=") }
            try ("[fleet]\n" + service.joined(separator: "\n") + "\n").write(
                to: keys.url.appendingPathComponent(".pg_service.conf"), atomically: true, encoding: .utf8)
            let cli = FleetCommandLine(schema: TestCluster.freshSchema(), keyFile: keys.keyFile, home: keys.url)
            // No CA in ~/.postgresql/root.crt (HOME is the test's directory): verify-full fails.
            let unverified = try cli.run(["fleet", "init"], conninfo: "service=fleet")
            #expect(unverified.status != 0 && unverified.stderr.contains("TLS verification failed"), "\(unverified)")
            // Asking for less is refused without --insecure-transport, as for a host given in the string.
            let weak = try cli.run(["fleet", "init"], conninfo: "service=fleet sslmode=require")
            #expect(weak.status != 0 && weak.stderr.contains("--insecure-transport"), "\(weak)")
        }
    }
}
