import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `credvault auth login --resource`, `auth token --resource`, `auth header --resource` and
    /// `auth status` against glewlwyd's "resources" plugin (no refresh token rotation).
    @Suite("credvault auth with resource indicators", .ownThread)
    struct ResourceCLI {
        let provider: Glewlwyd
        let vault: TemporaryVault
        let environment: [String: String]

        init() throws {
            provider = try Glewlwyd.require()
            vault = try TemporaryVault()
            environment = try vault.cliEnvironment()
        }

        var vaultArgs: [String] { ["--vault", vault.url.path] }

        func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
            let process = try CLIProcess(arguments + vaultArgs, environment: environment)
            let status = try await process.wait()
            return (status, process.stdout.trimmingCharacters(in: .whitespacesAndNewlines), process.stderr)
        }

        @Test("login with two resources; token and header per resource carry that audience; status lists them without tokens; an unknown one exits 11 naming invalid_target")
        func tokensPerResource() async throws {
            let process = try CLIProcess(
                ["auth", "login", "--issuer", provider.resourcesIssuer.absoluteString, "--client-id", provider.clientID,
                 "--port", String(provider.redirectPort), "--no-browser", "--timeout", "30",
                 "--resource", Glewlwyd.resourceA.absoluteString, "--resource", Glewlwyd.resourceB.absoluteString] + vaultArgs,
                environment: environment)
            let line = await process.waitForStderrLine { $0.hasPrefix("http") }
            let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
            let browser = try await TestBrowser.signIn(provider)
            _ = try await browser.deliver(try await browser.authorize(url))
            #expect(try await process.wait() == 0, "\(process.stderr)")

            let a = try await run(["auth", "token", "--resource", Glewlwyd.resourceA.absoluteString])
            #expect(a.status == 0, "\(a.stderr)")
            #expect(try ResourceIndicators.audience(a.stdout) == Glewlwyd.resourceA.absoluteString)
            let b = try await run(["auth", "header", "--url", "http://127.0.0.1:9999/mcp/call", "--resource", Glewlwyd.resourceB.absoluteString])
            #expect(b.status == 0, "\(b.stderr)")
            let bearer = try #require(b.stdout.split(separator: "\n").first { $0.hasPrefix("Authorization: Bearer ") })
            #expect(try ResourceIndicators.audience(String(bearer.dropFirst("Authorization: Bearer ".count))) == Glewlwyd.resourceB.absoluteString)
            let again = try await run(["auth", "token", "--resource", Glewlwyd.resourceA.absoluteString])
            #expect(again.stdout == a.stdout, "served from the session")

            let status = try await run(["auth", "status", "--json"])
            #expect(status.status == 0, "\(status.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            let listed = try #require(object["resources"] as? [[String: Any]]).compactMap { $0["resource"] as? String }
            #expect(listed == [Glewlwyd.resourceB.absoluteString, Glewlwyd.resourceA.absoluteString].sorted())
            #expect(!status.stdout.contains(a.stdout))

            let unknown = try await run(["auth", "token", "--resource", "https://unknown.example.com/"])
            #expect(unknown.status == 11)
            #expect(unknown.stderr.contains("invalid_target"))
            let bad = try await run(["auth", "token", "--resource", "https://api.example.com/#f"])
            #expect(bad.status == 2)
        }

        @Test("with rotating refresh tokens, token --resource exits 11 saying the provider rotates, and the main token still works")
        func rotatingChainRefusedForAResource() async throws {
            let process = try CLIProcess(
                ["auth", "login", "--issuer", provider.issuer.absoluteString, "--client-id", provider.clientID,
                 "--port", String(provider.redirectPort), "--no-browser", "--timeout", "30",
                 "--resource", Glewlwyd.resourceA.absoluteString, "--resource", Glewlwyd.resourceB.absoluteString] + vaultArgs,
                environment: environment)
            let line = await process.waitForStderrLine { $0.hasPrefix("http") }
            let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
            let browser = try await TestBrowser.signIn(provider)
            _ = try await browser.deliver(try await browser.authorize(url))
            #expect(try await process.wait() == 0, "\(process.stderr)")

            let refused = try await run(["auth", "token", "--resource", Glewlwyd.resourceA.absoluteString])
            #expect(refused.status == 11)
            #expect(refused.stderr.contains("rotates refresh tokens"), "\(refused.stderr)")
            let main = try await run(["auth", "token"])
            #expect(main.status == 0, "\(main.stderr)")
            #expect(try ResourceIndicators.audience(main.stdout) != Glewlwyd.resourceA.absoluteString)
        }
    }
}
