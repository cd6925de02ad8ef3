import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

/// `credvault auth login --port N` when the issuer, or an endpoint the sign-in calls, is on
/// 127.0.0.1:N, where the redirect listener would be: refused at once as a usage error (exit
/// code 2) naming the port, instead of calling its own listener and waiting out the request
/// timeout. The port is a `ClosedPort` (held, not listening), so nothing else takes it.
@Suite struct LoginPortConflictTests {
    /// Runs `auth login --port port` against `issuer` in a vault of its own, without a browser.
    private func login(issuer: String, port: UInt16) async throws -> (Int32, String, String) {
        let vault = try TemporaryVault()
        let arguments = [
            "auth", "login", "--issuer", issuer, "--client-id", "app", "--port", String(port), "--no-browser",
            "--timeout", "600", "--vault", vault.url.path,
        ]
        return try await withCeiling(.seconds(120), "auth login refused") {
            try await CLIProcess.run(arguments, environment: try vault.cliEnvironment())
        }
    }

    @Test func anIssuerOnTheListenersPortIsAUsageError() async throws {
        let taken = try ClosedPort()
        for issuer in ["http://127.0.0.1:\(taken.port)", "http://localhost:\(taken.port)/realm"] {
            let (status, _, stderr) = try await login(issuer: issuer, port: taken.port)
            #expect(status == 2, "\(issuer): \(stderr)")
            #expect(stderr.contains("--issuer") && stderr.contains("its own listener") && stderr.contains("port \(taken.port)"), "\(stderr)")
        }
    }

    @Test func aDiscoveredEndpointOnTheListenersPortIsAUsageError() async throws {
        let taken = try ClosedPort()
        let base = Mutex("")
        let provider = try StubProvider { request in
            let issuer = base.withLock { $0 }
            guard request.path == "/.well-known/openid-configuration" else { return .notFound }
            return .json(#"""
                {"issuer":"\#(issuer)","authorization_endpoint":"\#(issuer)/authorize",
                 "token_endpoint":"http://127.0.0.1:\#(taken.port)/token","jwks_uri":"\#(issuer)/jwks"}
                """#)
        }
        base.withLock { $0 = provider.base }
        let (status, _, stderr) = try await login(issuer: provider.base, port: taken.port)
        #expect(status == 2, "\(stderr)")
        #expect(stderr.contains("token endpoint") && stderr.contains("its own listener"), "\(stderr)")
    }
}
