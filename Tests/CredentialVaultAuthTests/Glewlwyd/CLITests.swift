import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `credvault auth ...` as a user runs it, against glewlwyd, with a sealed-file vault.
    @Suite("credvault auth", .ownThread)
    struct CLI {
        let provider: Glewlwyd
        let vault: TemporaryVault
        let environment: [String: String]

        init() throws {
            provider = try Glewlwyd.require()
            vault = try TemporaryVault()
            environment = try vault.cliEnvironment()
        }

        var vaultArgs: [String] { ["--vault", vault.url.path] }

        func credvault(_ arguments: [String]) async throws -> (Int32, String, String) {
            try await CLIProcess.run(arguments + vaultArgs, environment: environment)
        }

        /// `auth login` through the loopback listener; the test reads the URL on stderr and plays the browser.
        func login() async throws {
            let process = try CLIProcess(
                ["auth", "login", "--issuer", provider.issuer.absoluteString, "--client-id", provider.clientID,
                 "--port", String(provider.redirectPort), "--no-browser", "--timeout", "30"] + vaultArgs,
                environment: environment)
            let line = await process.waitForStderrLine { $0.hasPrefix("http") }
            let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
            let browser = try await TestBrowser.signIn(provider)
            let page = try await browser.deliver(try await browser.authorize(url))
            #expect(page.status == 200 && page.page.contains("You can close this window"))
            #expect(try await process.wait() == 0, "\(process.stderr)")
            #expect(process.stdout.contains("Signed in as"))
            #expect(process.stdout.contains("alice@example.com"))
        }

        @Test("login (browser + loopback), status, token, token --force-refresh, logout")
        func lifecycle() async throws {
            try await login()
            let (statusCode, status, _) = try await credvault(["auth", "status", "--json"])
            #expect(statusCode == 0)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
            #expect(object["signed_in"] as? Bool == true)
            #expect(object["email"] as? String == "alice@example.com")
            #expect(object["issuer"] as? String == provider.issuer.absoluteString)

            let (tokenCode, token, _) = try await credvault(["auth", "token"])
            #expect(tokenCode == 0)
            let accessToken = token.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: accessToken) == 200)
            let (_, again, _) = try await credvault(["auth", "token"])
            #expect(again == token)  // still fresh: the same token, no refresh
            let (forcedCode, forced, _) = try await credvault(["auth", "token", "--force-refresh"])
            #expect(forcedCode == 0 && forced != token)

            let (logoutCode, logout, _) = try await credvault(["auth", "logout"])
            #expect(logoutCode == 0)
            #expect(logout.contains("revoked"))
            #expect(logout.contains("end_session"))
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: forced.trimmingCharacters(in: .whitespacesAndNewlines)) == 401)
            let (afterCode, after, _) = try await credvault(["auth", "status"])
            #expect(afterCode == 1 && after.contains("Not signed in"))
            let (noTokenCode, noToken, _) = try await credvault(["auth", "token"])
            #expect(noTokenCode == 1 && noToken.isEmpty)
        }

        @Test("custom-scheme sign-in across two processes: login --redirect-uri exits, auth redirect URL completes")
        func customSchemeAcrossProcesses() async throws {
            let begin = try CLIProcess(
                ["auth", "login", "--issuer", provider.issuer.absoluteString, "--client-id", provider.clientID,
                 "--redirect-uri", provider.customRedirectURI, "--no-browser"] + vaultArgs, environment: environment)
            #expect(try await begin.wait() == 0, "\(begin.stderr)")
            let line = begin.stderr.split(separator: "\n").map(String.init).first { $0.hasPrefix("http") }
            let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL: \(begin.stderr)")
            let redirect = try await TestBrowser.signIn(provider).authorize(url)
            #expect(redirect.scheme == "org.credentialvault.test")
            // A forged state is refused by the second process (exit 11) and consumes nothing.
            var forged = URLComponents(url: redirect, resolvingAgainstBaseURL: false)!
            forged.queryItems = forged.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 }
            let (forgedCode, _, forgedError) = try await credvault(["auth", "redirect", forged.url!.absoluteString])
            #expect(forgedCode == 11 && forgedError.contains("state"))
            let (code, out, error) = try await credvault(["auth", "redirect", redirect.absoluteString])
            #expect(code == 0, "\(error)")
            #expect(out.contains("alice@example.com"))
            let (replayCode, _, _) = try await credvault(["auth", "redirect", redirect.absoluteString])
            #expect(replayCode == 11)  // single use
            let (statusCode, _, _) = try await credvault(["auth", "status"])
            #expect(statusCode == 0)
        }

        @Test("login --device prints the code; the user approves it elsewhere")
        func deviceLogin() async throws {
            let process = try CLIProcess(
                ["auth", "login", "--device", "--issuer", provider.issuer.absoluteString, "--client-id", provider.clientID]
                    + vaultArgs, environment: environment)
            let line = try #require(
                await process.waitForStderrLine { $0.contains("enter the code") }, "no code on stderr: \(process.stderr)")
            let code = try #require(line.split(separator: " ").last.map(String.init))
            #expect(line.contains("/api/oidc/device"))
            try await TestBrowser.signIn(provider).approveDevice(userCode: code, issuer: provider.issuer)
            #expect(try await process.wait() == 0, "\(process.stderr)")
            let (statusCode, status, _) = try await credvault(["auth", "status"])
            #expect(statusCode == 0 && status.contains("alice@example.com"))
        }

        @Test("token --client-credentials prints a service token, cached in the vault")
        func clientCredentials() async throws {
            let secretFile = vault.directory.appendingPathComponent("svc-secret")
            try Data((provider.serviceSecret + "\n").utf8).write(to: secretFile)
            chmod(secretFile.path, 0o600)  // checked like a passphrase file
            let arguments = [
                "auth", "token", "--client-credentials", "--issuer", provider.issuer.absoluteString,
                "--client-id", provider.serviceClientID, "--client-secret-file", secretFile.path, "--scope", "api",
            ]
            let (code, token, error) = try await credvault(arguments)
            #expect(code == 0, "\(error)")
            #expect(token.split(separator: ".").count == 3)
            let (_, cached, _) = try await credvault(arguments)
            #expect(cached == token)
            try Data("wrong\n".utf8).write(to: secretFile)
            let (wrongCode, _, wrongError) = try await credvault(arguments + ["--force-refresh"])
            #expect(wrongCode == 11, "\(wrongError)")
            #expect(wrongError.contains("client credentials"))
        }

        @Test("token --client-credentials --dpop prints a bound token and says so; header --client-credentials gives DPoP headers with a proof for the URL")
        func clientCredentialsWithDPoP() async throws {
            let secretFile = vault.directory.appendingPathComponent("svc-secret")
            try Data((provider.serviceSecret + "\n").utf8).write(to: secretFile)
            chmod(secretFile.path, 0o600)
            let service = [
                "--client-credentials", "--dpop", "--issuer", provider.dpopIssuer.absoluteString,
                "--client-id", provider.serviceClientID, "--client-secret-file", secretFile.path, "--scope", "api",
            ]
            let (code, output, error) = try await credvault(["auth", "token"] + service)
            #expect(code == 0, "\(error)")
            #expect(error.contains("DPoP-bound"))
            let token = output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try GlewlwydTests.DPoP.claims(token)["cnf"]?.objectValue?["jkt"] != nil)
            let url = "http://127.0.0.1:9999/api/items"
            let (headerCode, headers, headerError) = try await credvault(["auth", "header", "--url", url, "--method", "PUT"] + service)
            #expect(headerCode == 0, "\(headerError)")
            let lines = headers.split(separator: "\n").map(String.init)
            #expect(lines.contains("Authorization: DPoP \(token)"), "the cached bound token")
            let proof = try #require(lines.first { $0.hasPrefix("DPoP: ") }).dropFirst("DPoP: ".count)
            #expect(DPoPProofValidator().rejection(
                proof: String(proof), method: "PUT", url: url, accessToken: token, claims: try GlewlwydTests.DPoP.claims(token)) == nil)
        }

        @Test("bad usage is exit code 2 with a hint")
        func usage() async throws {
            let (code, _, error) = try await credvault(["auth", "login"])
            #expect(code == 2)
            #expect(error.contains("--issuer"))
            let (unknown, _, _) = try await credvault(["auth", "dance"])
            #expect(unknown == 2)
        }

        @Test("two processes sharing the sealed-file vault make exactly one refresh between them")
        func crossProcessSingleFlight() async throws {
            try await login()
            // Age the stored session so that every process wants to refresh it.
            let store = try vault.open()
            let storage = SessionStorage(
                store: store, key: OIDCConfiguration(issuer: provider.issuer, clientID: provider.clientID).sessionKey,
                options: .default)
            var session = try #require(try await storage.load())
            session.expiresAt = Date().addingTimeInterval(-5)
            try await storage.save(session)
            let marker = provider.logSize()
            let processes = try (0..<4).map { _ in
                try CLIProcess(["auth", "token", "--log-level", "debug"] + vaultArgs, environment: environment)
            }
            var tokens: [String] = []
            for process in processes {
                #expect(try await process.wait() == 0, "\(process.stderr)")
                tokens.append(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(Set(tokens).count == 1)
            #expect(tokens[0] != session.accessToken)
            let refreshes = processes.filter { $0.stderr.contains("refreshing the session") }.count
            #expect(refreshes == 1)
            let issued = try await provider.waitForLog(1) { provider.loggedGrants(since: marker).issued }
            #expect(issued == 1, "the provider issued \(issued) tokens")
            #expect(provider.loggedGrants(since: marker).refused == 0)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: tokens[0]) == 200)
        }
    }
}
