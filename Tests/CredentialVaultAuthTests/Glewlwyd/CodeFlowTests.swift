import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    @Suite("authorization code + PKCE", .ownThread)
    struct CodeFlow {
        @Test("sign-in through the loopback listener: code + PKCE S256, state, nonce, verified ID token")
        func loopbackSignIn() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let pages = PageBox()
            let session = try await client.signIn(
                browser: browser.opener(pages: pages), redirect: LoopbackRedirect(port: .fixed(provider.redirectPort)),
                timeout: .seconds(30))
            #expect(session.user?.email == "alice@example.com")
            #expect(session.refreshToken != nil)
            #expect(session.idToken != nil)
            let page = try await pages.result()
            #expect(page.status == 200)
            #expect(page.page.contains("You can close this window"))
            #expect(try await client.sessions.storedSession() == session)
            #expect(client.sessions.state == .authenticated(SessionSummary(session)))
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: session.accessToken) == 200)
            // The pending sign-in (verifier, state, nonce) was consumed.
            await #expect(try store.listKeys(service: client.configuration.storageService + ".pending").isEmpty)
        }

        @Test("the authorization URL carries S256 PKCE, state and nonce, never plain")
        func authorizationURL() async throws {
            let provider = try Glewlwyd.require()
            let client = try await OIDCClient(configuration: provider.configuration(), store: InMemoryStore(), logger: .credentialVaultSilent)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let parameters = FormEncoding.parameters(of: request.url)
            #expect(parameters["code_challenge_method"] == "S256")
            #expect(parameters["code_challenge"]?.count == 43)
            #expect(parameters["state"] == request.state)
            #expect((parameters["nonce"]?.count ?? 0) >= 43)
            #expect(parameters["code_verifier"] == nil)
        }

        @Test("custom-scheme redirect handled by a new client over a reopened sealed-file vault (process restart)")
        func customSchemeAcrossRestart() async throws {
            let provider = try Glewlwyd.require()
            let vault = try TemporaryVault()
            let browser = try await TestBrowser.signIn(provider)
            let first = try await OIDCClient(configuration: provider.configuration(), store: try vault.open(), logger: .credentialVaultSilent)
            let request = try await first.beginAuthorization(redirectURI: provider.customRedirectURI)
            let second = try await first.beginAuthorization(redirectURI: provider.customRedirectURI)  // two pending at once
            let redirect = try await browser.authorize(request.url)
            #expect(redirect.scheme == "org.credentialvault.test")
            // "Restart": a fresh store object reading the file and a fresh client.
            let restarted = try await OIDCClient(configuration: provider.configuration(), store: try vault.open(), logger: .credentialVaultSilent)
            let session = try await restarted.handleRedirect(url: redirect)
            #expect(session.user?.subject.isEmpty == false)
            // The other pending sign-in is still usable.
            let otherRedirect = try await browser.authorize(second.url)
            _ = try await restarted.handleRedirect(url: otherRedirect)
        }

        @Test("a wrong PKCE verifier is rejected by the provider")
        func wrongVerifier() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            // Swap the stored verifier for another valid one.
            let key = client.configuration.pendingKey(state: request.state)
            var pending = try #require(try await PendingAuthorization.take(key, from: store))
            pending.verifier = PKCE.generate().verifier
            try await pending.save(under: key, in: store, ttl: .seconds(60))
            let redirect = try await browser.authorize(request.url)
            await expectThrows(GlewlwydTests.isProviderRejection) { try await client.handleRedirect(url: redirect) }
            #expect(try await client.sessions.storedSession() == nil)
        }

        @Test("a redirect with a foreign state is rejected; the real one still works, once")
        func stateMismatch() async throws {
            let provider = try Glewlwyd.require()
            let client = try await OIDCClient(configuration: provider.configuration(), store: InMemoryStore(), logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let redirect = try await browser.authorize(request.url)
            var forged = URLComponents(url: redirect, resolvingAgainstBaseURL: false)!
            forged.queryItems = forged.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "attacker") : $0 }
            await #expect(throws: AuthError.stateMismatch) { try await client.handleRedirect(url: forged.url!) }
            var stateless = URLComponents(url: redirect, resolvingAgainstBaseURL: false)!
            stateless.queryItems = stateless.queryItems?.filter { $0.name != "state" }
            await #expect(throws: AuthError.stateMismatch) { try await client.handleRedirect(url: stateless.url!) }
            #expect(try await client.sessions.storedSession() == nil)
            _ = try await client.handleRedirect(url: redirect)
            await #expect(throws: AuthError.stateMismatch) { try await client.handleRedirect(url: redirect) }
        }

        @Test("an ID token whose nonce is not the pending sign-in's is rejected")
        func nonceMismatch() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let key = client.configuration.pendingKey(state: request.state)
            var pending = try #require(try await PendingAuthorization.take(key, from: store))
            pending.nonce = "another-nonce"
            try await pending.save(under: key, in: store, ttl: .seconds(60))
            let redirect = try await browser.authorize(request.url)
            await #expect(throws: AuthError.nonceMismatch) { try await client.handleRedirect(url: redirect) }
            #expect(try await client.sessions.storedSession() == nil)
        }

        @Test("an expired pending sign-in is refused")
        func expiredPending() async throws {
            let provider = try Glewlwyd.require()
            let clock = ManualClock()
            let store = InMemoryStore(clock: clock)
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let redirect = try await browser.authorize(request.url)
            clock.advance(by: .seconds(601))
            await #expect(throws: AuthError.authorizationExpired) { try await client.handleRedirect(url: redirect) }
        }

        @Test("no secret reaches the logs, even at trace level")
        func logsAreRedacted() async throws {
            let provider = try Glewlwyd.require()
            let capture = LogCapture()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: capture.logger(level: .trace))
            let browser = try await TestBrowser.signIn(provider)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let pending = try await #require(try store.load(client.configuration.pendingKey(state: request.state)))
            let verifier = try JSONDecoder.session.decode(PendingAuthorization.self, from: pending).verifier
            let redirect = try await browser.authorize(request.url)
            let code = try #require(FormEncoding.parameters(of: redirect)["code"])
            let session = try await client.handleRedirect(url: redirect)
            let refreshed = try await client.sessions.getAccessToken(forceRefresh: true)
            try await client.signOut()
            #expect(capture.entries.count > 5)
            let text = capture.text
            for secret in [session.accessToken, session.refreshToken!, session.idToken!, refreshed, code, verifier, request.state] {
                #expect(!text.contains(secret))
            }
        }
    }
}
