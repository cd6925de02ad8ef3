import CredentialVaultTestSupport
import Foundation
import Synchronization

@testable import CredentialVaultAuth

/// `credvault auth token --client-credentials` against a `StubProvider` playing a whole
/// provider (discovery and token endpoint on 127.0.0.1), in a vault of its own: the CLI as a
/// service runs it, in a process of its own (so a test can give it an environment of its own
/// without touching the test process's).
enum ServiceTokenCLI {
    static let secret = "svc-S3CRET-value"
    static let token = "service-token-from-the-provider"

    /// A provider whose discovery document names itself and whose token endpoint answers
    /// `answer` (by default: hands out `token`).
    static func provider(answer: StubProvider.Reply = .json(#"{"access_token":"\#(ServiceTokenCLI.token)","token_type":"Bearer","expires_in":3600}"#)) throws -> StubProvider {
        let base = Mutex<String>("")
        let stub = try StubProvider { request in
            let issuer = base.withLock { $0 }
            switch request.path {
            case "/.well-known/openid-configuration":
                return .json(#"{"issuer":"\#(issuer)","token_endpoint":"\#(issuer)/token","jwks_uri":"\#(issuer)/jwks"}"#)
            case "/token": return answer
            default: return .notFound
            }
        }
        base.withLock { $0 = stub.base }
        return stub
    }

    /// Runs the CLI against `provider` with `environment` added to its own; (status, stdout, stderr).
    static func run(
        _ provider: StubProvider, environment: [String: String] = [:], extra: [String] = []
    ) async throws -> (Int32, String, String) {
        let vault = try TemporaryVault()
        let secretFile = vault.directory.appendingPathComponent("svc-secret")
        try Data((secret + "\n").utf8).write(to: secretFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
        let arguments = [
            "auth", "token", "--client-credentials", "--issuer", provider.base, "--client-id", "svc",
            "--client-secret-file", secretFile.path, "--vault", vault.url.path,
        ]
        return try await CLIProcess.run(arguments + extra, environment: try vault.cliEnvironment().merging(environment) { $1 })
    }
}
