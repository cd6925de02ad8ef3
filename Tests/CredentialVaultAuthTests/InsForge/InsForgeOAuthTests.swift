import CredentialVault
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

extension InsForgeEndToEnd {
    /// OAuth with PKCE through the fake provider: loopback listener and custom-scheme redirect,
    /// a wrong verifier, state mismatches, a denied consent.
    @Suite("OAuth", .ownThread) struct OAuth {
        typealias Server = InsForgeTestServer
        static let appRedirect = "com.example.app:/oauth/callback"

        @Test("sign-in through the browser and the loopback listener", arguments: [InsForgeOAuthProvider.github, .google])
        func loopbackSignIn(provider: InsForgeOAuthProvider) async throws {
            let server = try await Server.fresh()
            let store = InMemoryStore()
            let client = try await server.client(store: store)
            let response = try #require(try await client.signInWithOAuth(provider: provider, browser: FollowingBrowser(), timeout: .seconds(30)))
            #expect(response.user?.email == "oauth.user@example.com" && response.refreshToken != nil)
            #expect(try await client.storedSession()?.accessToken == response.accessToken)
            #expect(try await client.getCurrentUser().providers.contains(provider.rawValue))
            let requests = try await server.requests()
            let initiation = try #require(requests.first { $0["operation"]?.stringValue == "oauthInit" })
            let challenge = try #require(initiation["query"]?["code_challenge"]?.stringValue)
            #expect(challenge.count == 43, "an S256 challenge")
            let redirect = try #require(initiation["query"]?["redirect_uri"]?.stringValue)
            #expect(redirect.hasPrefix("http://127.0.0.1:") && redirect.contains("/callback?state="))
            let exchange = try #require(requests.first { $0["operation"]?.stringValue == "oauthExchange" })
            #expect(exchange["status"] == 200 && exchange["query"]?["client_type"] == "desktop")
            await #expect(try store.listKeys().map(\.account) == [client.configuration.sessionKey.account], "only the session is kept")
        }

        @Test("custom-scheme redirect completed with handleRedirect(url:); a used state is refused")
        func customSchemeRedirect() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            let browser = FollowingBrowser(deliver: false)
            #expect(try await client.signInWithOAuth(provider: .discord, redirectTo: Self.appRedirect, browser: browser) == nil)
            let redirect = try #require(browser.landed.first)
            #expect(redirect.absoluteString.hasPrefix(Self.appRedirect + "?state="))
            #expect(redirect.absoluteString.contains("insforge_code="))
            let response = try await client.handleRedirect(url: redirect)
            #expect(response.user?.email == "oauth.user@example.com")
            #expect(try await client.storedSession() != nil)
            await #expect(throws: InsForgeError.auth(.stateMismatch), "the pending sign-in is single use") {
                try await client.handleRedirect(url: redirect)
            }
        }

        @Test("the code of another sign-in, exchanged with this sign-in's verifier, is refused", arguments: ["spec", "backend"])
        func wrongVerifierIsRejected(mode: String) async throws {
            let server = try await Server.fresh(["mode": .string(mode)])
            let client = try await server.client()
            let browser = FollowingBrowser(deliver: false)
            let first = try await client.beginOAuth(provider: .github, redirectTo: Self.appRedirect)
            let second = try await client.beginOAuth(provider: .github, redirectTo: Self.appRedirect)
            #expect(first.state != second.state)
            let secondRedirect = try await browser.run(second.url)
            // The second sign-in's code, delivered with the first sign-in's state: the client
            // sends the first verifier, which does not match the second challenge.
            var swapped = try #require(URLComponents(url: secondRedirect, resolvingAgainstBaseURL: false))
            swapped.queryItems = swapped.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: first.state) : $0 }
            let injected = try #require(swapped.url)
            do {
                try await client.handleRedirect(url: injected)
                Issue.record("a code was exchanged with the wrong verifier")
            } catch .invalidCode(let answer) {
                #expect(answer.statusCode == (mode == "spec" ? 401 : 400))
                #expect(answer.message?.contains("PKCE") == true)
            } catch { Issue.record("unexpected \(error)") }
            #expect(try await client.storedSession() == nil)
            let reused = await #expect(throws: InsForgeError.self, "the code is one-time, even after a failed exchange") {
                try await client.handleRedirect(url: secondRedirect)
            }
            #expect(reused?.kind == "invalidCode", "\(String(describing: reused))")
            #expect(try await client.storedSession() == nil)
        }

        @Test("redirects without state, with an unknown state, or at another address are refused")
        func stateMismatch() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            let browser = FollowingBrowser(deliver: false)
            let request = try await client.beginOAuth(provider: .github, redirectTo: Self.appRedirect)
            let redirect = try await browser.run(request.url)
            let code = try #require(FormEncodingProbe.value("insforge_code", in: redirect))
            try await server.resetStats()
            let forged = [
                "\(Self.appRedirect)?insforge_code=\(code)",
                "\(Self.appRedirect)?state=&insforge_code=\(code)",
                "\(Self.appRedirect)?state=not-the-state&insforge_code=\(code)",
            ]
            for text in forged {
                await #expect(throws: InsForgeError.auth(.stateMismatch)) { try await client.handleRedirect(url: URL(string: text)!) }
            }
            #expect(try await server.stats()["oauthExchange"] == 0, "nothing is exchanged on a state mismatch")
            let elsewhere = try #require(URL(string: "com.example.other:/callback?state=\(request.state)&insforge_code=\(code)"))
            await #expect(throws: InsForgeError.auth(.stateMismatch)) { try await client.handleRedirect(url: elsewhere) }
            #expect(try await server.stats()["oauthExchange"] == 0)
            // The foreign redirect did not consume the pending sign-in:
            // the genuine one still completes, once.
            #expect(try await client.handleRedirect(url: redirect).refreshToken != nil)
            await #expect(throws: InsForgeError.auth(.stateMismatch)) { try await client.handleRedirect(url: redirect) }
            #expect(try await server.stats()["oauthExchange"] == 1)
        }

        @Test("a pending sign-in expires with its time to live")
        func pendingSignInExpires() async throws {
            let server = try await Server.fresh()
            let clock = ManualClock()
            let client = try await server.client(store: InMemoryStore(clock: clock))
            let request = try await client.beginOAuth(provider: .github, redirectTo: Self.appRedirect)
            #expect(abs(request.expiresAt.timeIntervalSince(clock.now()) - 600) < 1)
            let redirect = try await FollowingBrowser(deliver: false).run(request.url)
            clock.advance(by: .seconds(601))
            await #expect(throws: InsForgeError.auth(.authorizationExpired)) { try await client.handleRedirect(url: redirect) }
            #expect(try await server.stats()["oauthExchange"] == 0)
        }

        @Test("a denied consent ends as accessDenied; no session")
        func deniedConsent() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            let browser = FollowingBrowser(rewrite: { URL(string: $0.absoluteString + "&deny=1")! })
            do {
                try await client.signInWithOAuth(provider: .github, browser: browser, timeout: .seconds(30))
                Issue.record("signed in after a denied consent")
            } catch .auth(.accessDenied) {
            } catch { Issue.record("unexpected \(error)") }
            #expect(try await client.storedSession() == nil)
        }

        @Test("providers the backend does not implement answer 501 there (README note 4)")
        func unimplementedProvider() async throws {
            let server = try await Server.fresh(["mode": "backend"])
            let client = try await server.client()
            do {
                _ = try await client.beginOAuth(provider: .spotify, redirectTo: Self.appRedirect)
                Issue.record("spotify worked in backend mode")
            } catch .backend(let answer) {
                #expect(answer.statusCode == 501)
            } catch { Issue.record("unexpected \(error)") }
            try await server.configure(["mode": "spec"])
            #expect(try await client.beginOAuth(provider: .spotify, redirectTo: Self.appRedirect).url.absoluteString.contains("/spotify/"))
        }
    }
}

/// Reads one query parameter of a URL.
enum FormEncodingProbe {
    static func value(_ name: String, in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }
}
