import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `credvault auth login` with pushed authorization requests: `--par` forces them, a provider
    /// that requires them gets them without the flag.
    @Suite("credvault auth login with PAR", .ownThread)
    struct PARCLI {
        let provider: Glewlwyd
        let vault: TemporaryVault
        let environment: [String: String]

        init() throws {
            provider = try Glewlwyd.require()
            vault = try TemporaryVault()
            environment = try vault.cliEnvironment()
        }

        /// Runs `auth login` at `issuer` with `extra` options, plays the browser, and returns the
        /// authorization URL the start page sent it to.
        func login(issuer: URL, _ extra: [String]) async throws -> URL {
            let process = try CLIProcess(
                ["auth", "login", "--issuer", issuer.absoluteString, "--client-id", provider.clientID,
                 "--port", String(provider.redirectPort), "--no-browser", "--timeout", "30", "--vault", vault.url.path] + extra,
                environment: environment)
            let line = await process.waitForStderrLine { $0.hasPrefix("http") }
            let start = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
            // The start page works once: follow it here, then authorize at its target.
            let authorization = try await TestBrowser.followStartPage(start)
            let browser = try await TestBrowser.signIn(provider)
            let response = try await browser.request("GET", URL(string: authorization.absoluteString + "&g_continue")!)
            let redirect = try #require(response.headers["location"].flatMap(URL.init(string:)), "HTTP \(response.status)")
            let page = try await browser.deliver(redirect)
            #expect(page.status == 200)
            #expect(try await process.wait() == 0, "\(process.stderr)")
            #expect(process.stdout.contains("alice@example.com"))
            return authorization
        }

        static func queryNames(_ url: URL) -> Set<String> {
            Set(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) ?? [])
        }

        @Test("login --par at a provider that allows PAR: the browser gets client_id and request_uri only")
        func forced() async throws {
            let url = try await login(issuer: provider.issuer, ["--par"])
            #expect(Self.queryNames(url) == ["client_id", "request_uri"])
        }

        @Test("login without --par at a provider that requires PAR pushes all the same")
        func automatic() async throws {
            let url = try await login(issuer: provider.parIssuer, [])
            #expect(Self.queryNames(url) == ["client_id", "request_uri"])
        }

        @Test("login without --par at a provider that merely allows PAR sends a plain request")
        func plain() async throws {
            let url = try await login(issuer: provider.issuer, [])
            #expect(Self.queryNames(url).isSuperset(of: ["state", "code_challenge", "redirect_uri"]))
        }

        @Test("--par with --device is a usage error")
        func parWithDevice() async throws {
            let (code, _, error) = try await CLIProcess.run(
                ["auth", "login", "--par", "--device", "--issuer", provider.issuer.absoluteString, "--client-id", provider.clientID,
                 "--vault", vault.url.path], environment: environment)
            #expect(code == 2, "\(error)")
            #expect(error.contains("--par"))
        }
    }
}
