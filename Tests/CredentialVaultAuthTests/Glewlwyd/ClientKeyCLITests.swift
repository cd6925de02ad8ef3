import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `credvault auth token --client-credentials` with private_key_jwt and client_secret_jwt:
    /// the key comes from the vault or a checked key file (the refusals that need no provider
    /// are in `ClientKeyOptionsTests`).
    @Suite("credvault auth: client keys", .ownThread)
    struct ClientKeyCLI {
        let provider: Glewlwyd
        let vault: TemporaryVault
        let environment: [String: String]
        let keyDirectory: String

        init() throws {
            provider = try Glewlwyd.require()
            vault = try TemporaryVault()
            environment = try vault.cliEnvironment()
            keyDirectory = try #require(ProcessInfo.processInfo.environment["GLEWLWYD_CLIENT_KEY_DIR"])
        }

        func credvault(_ arguments: [String], stdin: Data? = nil) async throws -> (Int32, String, String) {
            try await CLIProcess.run(arguments + ["--vault", vault.url.path], environment: environment, stdin: stdin)
        }

        func tokenArguments(_ clientID: String) -> [String] {
            ["auth", "token", "--client-credentials", "--issuer", provider.issuer.absoluteString, "--client-id", clientID, "--scope", "api"]
        }

        /// A copy of the provisioned key `name` in the vault's directory, with `mode`.
        func keyFile(_ name: String, mode: mode_t = 0o600) throws -> URL {
            let file = vault.directory.appendingPathComponent(name)
            try Data(contentsOf: URL(fileURLWithPath: keyDirectory).appendingPathComponent(name)).write(to: file)
            chmod(file.path, mode)
            return file
        }

        @Test("a key file of the user's own, readable by no one else, signs the assertion", arguments: ["es256", "rs256", "eddsa"])
        func keyFile(algorithm: String) async throws {
            let file = try keyFile("client-\(algorithm).pem")
            let (code, token, error) = try await credvault(
                tokenArguments("pk-\(algorithm)") + ["--client-key-file", file.path, "--client-key-id", "pk-\(algorithm)"])
            #expect(code == 0, "\(error)")
            #expect(token.split(separator: ".").count == 3)
        }

        @Test("a key stored in the vault is named by SERVICE/ACCOUNT")
        func keyInVault() async throws {
            let pem = try Data(contentsOf: URL(fileURLWithPath: keyDirectory).appendingPathComponent("client-es256.pem"))
            let (stored, _, storeError) = try await credvault(["store", "client-keys", "pk-es256"], stdin: pem)
            #expect(stored == 0, "\(storeError)")
            let (code, token, error) = try await credvault(
                tokenArguments("pk-es256") + ["--client-key", "client-keys/pk-es256", "--client-key-id", "pk-es256"])
            #expect(code == 0, "\(error)")
            #expect(token.split(separator: ".").count == 3)
            let (missing, _, missingError) = try await credvault(
                tokenArguments("pk-es256") + ["--client-key", "client-keys/nobody", "--force-refresh"])
            #expect(missing == 2, "\(missingError)")
        }

        @Test("client_secret_jwt from a secret file; the options go together only as documented")
        func clientSecretJWT() async throws {
            let file = try keyFile("sj-secret")
            let (code, token, error) = try await credvault(tokenArguments("sj") + ["--client-secret-file", file.path, "--client-secret-jwt"])
            #expect(code == 0, "\(error)")
            #expect(token.split(separator: ".").count == 3)
            let key = try keyFile("client-es256.pem")
            for conflicting in [
                ["--client-secret-file", file.path, "--client-key-file", key.path],
                ["--client-key-file", key.path, "--client-secret-jwt"],
                ["--client-secret-file", file.path, "--assertion-audience", "issuer"],
                [String](),
            ] {
                let (usage, _, _) = try await credvault(tokenArguments("sj") + conflicting + ["--force-refresh"])
                #expect(usage == 2, "\(conflicting)")
            }
        }

        @Test("--assertion-audience issuer is refused by glewlwyd, which wants the endpoint's URL")
        func audienceOption() async throws {
            let file = try keyFile("client-es256.pem")
            let (code, _, error) = try await credvault(
                tokenArguments("pk-es256") + ["--client-key-file", file.path, "--client-key-id", "pk-es256", "--assertion-audience", "issuer"])
            #expect(code == 11, "\(error)")
            let (ok, _, okError) = try await credvault(
                tokenArguments("pk-es256") + [
                    "--client-key-file", file.path, "--client-key-id", "pk-es256",
                    "--assertion-audience", provider.issuer.appendingPathComponent("token").absoluteString, "--force-refresh",
                ])
            #expect(ok == 0, "\(okError)")
        }
    }
}
