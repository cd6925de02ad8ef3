import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `credvault auth login --protected-resource` against the test resource server and
    /// glewlwyd's `reg` plugin, then `auth token` and `auth header` for that resource.
    @Suite("credvault auth for a protected resource", .ownThread)
    struct MCPProfileCLI {
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

        @Test("login --protected-resource registers a client, signs in for the resource; token and header then serve it, refreshed with the resource")
        func loginForAProtectedResource() async throws {
            let server = try await GlewlwydTests.MCPProfile.server(provider, requiredScope: "openid")
            defer { server.stop() }
            let process = try CLIProcess(
                ["auth", "login", "--protected-resource", server.resource.absoluteString,
                 "--port", String(try GlewlwydTests.Registration.freePort()), "--no-browser", "--timeout", "30"] + vaultArgs,
                environment: environment)
            let line = await process.waitForStderrLine { $0.hasPrefix("http") }
            let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
            let browser = try await TestBrowser.signIn(provider)
            let pages = PageBox()
            try await browser.consentingOpener(pages: pages).open(url)
            #expect(try await pages.result().status == 200)
            #expect(try await process.wait() == 0, "\(process.stderr)")

            let token = try await run(["auth", "token", "--force-refresh"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(try JSONWebToken(compactSerialization: token.stdout).claims["aud"]?.stringValue == server.resource.absoluteString)
            let header = try await run(["auth", "header", "--url", server.resource.absoluteString])
            #expect(header.status == 0, "\(header.stderr)")
            var headers: [String: String] = [:]
            for line in header.stdout.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2 { headers[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
            let answer = try await URLSessionTransport().send(HTTPRequest(url: server.resource, headers: headers, timeout: .seconds(10)))
            #expect(answer.status == 200)

            let bad = try await run(["auth", "login", "--protected-resource", "ftp://example.com/x"])
            #expect(bad.status == 2)
        }
    }
}
