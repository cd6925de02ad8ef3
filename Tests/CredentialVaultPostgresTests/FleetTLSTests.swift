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
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=other-ca",
                "-keyout", dir.url.appendingPathComponent("other-ca.key").path, "-out", ca.path,
            ]
            openssl.standardError = FileHandle.nullDevice
            try openssl.run()
            openssl.waitUntilExit()
            let wrongCA = conninfo.replacingOccurrences(
                of: #"sslrootcert=\S+"#, with: "sslrootcert=\(ca.path)", options: .regularExpression)
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(PostgresConfiguration(connectionString: wrongCA), host: "h", key: .passphrase("x"))
            }
            guard case .permissionDenied(let why)? = error else { return #expect(Bool(false), "wrong CA: \(String(describing: error))") }
            #expect(why.contains("TLS verification failed") && why.contains("certificate verify failed"), "\(why)")
        }
    }

    @Test func aWrongPasswordIsAClearError() async throws {
        try await offThePool {
            let wrongPassword = conninfo.replacingOccurrences(of: #"passfile=\S+"#, with: "password=wrong-password", options: .regularExpression)
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(PostgresConfiguration(connectionString: wrongPassword), host: "h", key: .passphrase("x"))
            }
            guard case .permissionDenied(let why)? = error else { return #expect(Bool(false), "wrong password: \(String(describing: error))") }
            #expect(why.contains("refused the password"))
            #expect(!why.contains("wrong-password"), "the error repeats the password")
        }
    }

    @Test func withoutTLSTheServerRefuses() async throws {
        try await offThePool {
            let plain = conninfo.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=disable")
            let error = thrownError { () throws(CredentialVaultError) in
                try PostgresStore.open(PostgresConfiguration(connectionString: plain), host: "h", key: .passphrase("x"))
            }
            guard case .permissionDenied? = error else { return #expect(Bool(false), "no TLS: \(String(describing: error))") }
        }
    }
}
