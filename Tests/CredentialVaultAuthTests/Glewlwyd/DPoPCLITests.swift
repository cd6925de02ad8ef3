import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `credvault auth login --dpop`, `auth token` and `auth header` against glewlwyd's "dpop"
    /// plugin (nonces mandatory), with a sealed-file vault shared by processes.
    @Suite("credvault auth with DPoP", .ownThread)
    struct DPoPCLI {
        let provider: Glewlwyd
        let vault: TemporaryVault
        let environment: [String: String]

        init() throws {
            provider = try Glewlwyd.require()
            vault = try TemporaryVault()
            environment = try vault.cliEnvironment()
        }

        var vaultArgs: [String] { ["--vault", vault.url.path] }

        func login() async throws {
            let process = try CLIProcess(
                ["auth", "login", "--dpop", "--issuer", provider.dpopIssuer.absoluteString, "--client-id", provider.clientID,
                 "--port", String(provider.redirectPort), "--no-browser", "--timeout", "30"] + vaultArgs,
                environment: environment)
            let line = await process.waitForStderrLine { $0.hasPrefix("http") }
            let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
            let browser = try await TestBrowser.signIn(provider)
            _ = try await browser.deliver(try await browser.authorize(url))
            #expect(try await process.wait() == 0, "\(process.stderr)")
        }

        /// The stored session, read as another process would.
        func storage() throws -> SessionStorage {
            SessionStorage(
                store: try vault.open(), key: OIDCConfiguration(issuer: provider.dpopIssuer, clientID: provider.clientID).sessionKey,
                options: .default)
        }

        @Test("two processes refreshing a DPoP session make one refresh with the session's key; token says it is DPoP-bound")
        func crossProcessRefresh() async throws {
            try await login()
            let storage = try storage()
            var session = try #require(try await storage.load())
            #expect(session.isDPoPBound)
            session.expiresAt = Date().addingTimeInterval(-5)
            try await storage.save(session)
            let processes = try (0..<2).map { _ in
                try CLIProcess(["auth", "token", "--log-level", "debug"] + vaultArgs, environment: environment)
            }
            var tokens: [String] = []
            for process in processes {
                #expect(try await process.wait() == 0, "\(process.stderr)")
                tokens.append(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
                #expect(process.stderr.contains("this token is DPoP-bound"))
            }
            #expect(Set(tokens).count == 1)
            #expect(tokens[0] != session.accessToken)
            #expect(processes.filter { $0.stderr.contains("refreshing the session") }.count == 1)
            let refreshed = try #require(try await storage.load())
            #expect(refreshed.dpopKey == session.dpopKey)
        }

        @Test("auth header prints DPoP headers that the provider's userinfo accepts")
        func headerForUserinfo() async throws {
            try await login()
            let url = provider.dpopIssuer.appendingPathComponent("userinfo")
            // Two requests: the first may be answered with a nonce challenge, which the second
            // process's proof then carries (the nonce is shared through the vault).
            var statuses: [Int] = []
            for _ in 0..<2 {
                let (code, output, error) = try await CLIProcess.run(
                    ["auth", "header", "--url", url.absoluteString, "--method", "get"] + vaultArgs, environment: environment)
                #expect(code == 0, "\(error)")
                var headers: [String: String] = [:]
                for line in output.split(separator: "\n") {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                }
                #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true)
                #expect(headers["DPoP"] != nil)
                let response = try await URLSessionTransport().send(HTTPRequest(url: url, headers: headers, timeout: .seconds(10)))
                statuses.append(response.status)
                if response.status == 401 {
                    // What a script would do with the challenge: here, hand the nonce to the vault as the library would.
                    let client = try await OIDCClient(
                        configuration: provider.dpopConfiguration(), store: try vault.open(), logger: .credentialVaultSilent)
                    await client.noteResponse(response, for: url)
                }
            }
            #expect(statuses.last == 200, "\(statuses)")
        }
    }
}
