import Logging
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    @Suite("session manager", .ownThread)
    struct Sessions {
        @Test("refresh rotates the refresh token, persisted before the new access token is handed out")
        func refreshAndRotation() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let token = try await client.getAccessToken(forceRefresh: true)
            #expect(token != first.accessToken)
            let stored = try #require(try await client.sessions.storedSession())
            #expect(stored.accessToken == token)
            #expect(stored.refreshToken != nil && stored.refreshToken != first.refreshToken)
            #expect(stored.user == first.user)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: token) == 200)
            // A second refresh uses the rotated token successfully.
            let again = try await client.getAccessToken(forceRefresh: true)
            #expect(again != token)
            // Without force, a fresh session is returned as is: no token request.
            #expect(try await client.getAccessToken() == again)
        }

        @Test("a replayed refresh token: the stale copy gets invalidGrant and is deleted; the provider revokes the chain")
        func replayedRefreshToken() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let original = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            _ = try await client.getAccessToken(forceRefresh: true)  // rotates: `original`'s refresh token is now used up

            // A stale copy of the session (a restored backup, a copied vault) tries to refresh.
            let staleStore = InMemoryStore()
            try await SessionStorage(store: staleStore, key: client.configuration.sessionKey, options: .default).save(original)
            let stale = try await OIDCClient(configuration: provider.configuration(), store: staleStore, logger: .credentialVaultSilent)
            await expectThrows(\AuthError.isInvalidGrant) { _ = try await stale.getAccessToken(forceRefresh: true) }
            await #expect(throws: AuthError.notSignedIn) { _ = try await stale.getAccessToken(forceRefresh: true) }
            await #expect(try staleStore.load(client.configuration.sessionKey) == nil)
            #expect(stale.sessions.state == .unauthenticated(.refreshRefused))

            // glewlwyd revokes the whole chain on replay: the legitimate session is dead too,
            // and the client reports it as invalidGrant and deletes it.
            await expectThrows(\AuthError.isInvalidGrant) { _ = try await client.getAccessToken(forceRefresh: true) }
            #expect(try await client.sessions.storedSession() == nil)
            #expect(client.sessions.state == .unauthenticated(.refreshRefused))
        }

        @Test("an access token the provider has expired is refreshed by getSession() (3-second tokens)")
        func expiredAccessToken() async throws {
            let provider = try Glewlwyd.require()
            let clock = ManualClock()
            let client = try await OIDCClient(
                configuration: provider.configuration(issuer: provider.shortIssuer, margin: .seconds(1)),
                store: InMemoryStore(), clock: clock, logger: .credentialVaultSilent)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(try await client.getSession() == first)  // still fresh: no refresh
            // The provider's clock is real: wait until it refuses the token (polling it, with a ceiling).
            try await withCeiling(.seconds(60), "the provider expiring a 3-second token") {
                while try await GlewlwydTests.userinfoStatus(provider, issuer: provider.shortIssuer, token: first.accessToken) != 401 {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            clock.advance(by: .seconds(3))  // and the client's sees the same
            let session = try await client.getSession()
            #expect(session.accessToken != first.accessToken)
            #expect(try #require(session.expiresAt) > clock.now())
            #expect(try await GlewlwydTests.userinfoStatus(provider, issuer: provider.shortIssuer, token: session.accessToken) == 200)
        }

        @Test("100 concurrent getAccessToken calls on an expiring session make exactly one token request")
        func singleFlight() async throws {
            let provider = try Glewlwyd.require()
            let (client, transport, clock) = try await GlewlwydTests.countedClient(provider)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            clock.advance(by: .seconds(3590))  // within the 60 s margin
            let marker = provider.logSize()
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 { group.addTask { try await client.getAccessToken() } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(tokens.count == 100)
            #expect(Set(tokens).count == 1)
            #expect(tokens[0] != first.accessToken)
            #expect(transport.tokenRequests("refresh_token") == 1)
            #expect(try await provider.waitForLog(1) { provider.loggedGrants(since: marker).issued } == 1)
            #expect(provider.loggedGrants(since: marker).refused == 0)
        }

        @Test("a refresh that lands after the sign-out began does not write the session back")
        func refreshAfterSignOut() async throws {
            let provider = try Glewlwyd.require()
            let transport = HeldRefreshTransport()
            let store = InMemoryStore()
            let client = try await OIDCClient(
                configuration: provider.configuration(proactive: true), store: store, transport: transport, logger: .credentialVaultSilent)
            let background = BackgroundWaits()  // the sign-out stops it first thing: that shows it began
            await background.install(in: client.sessions)
            _ = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(await background.began.reached(1))
            let refresh = Task { try await client.getAccessToken(forceRefresh: true) }
            #expect(await transport.refreshes.reached(1), "the provider refreshed; its answer is held")
            let signOut = Task { try await client.signOut() }
            #expect(await background.stopped.reached(1), "the sign-out began: it waits for the refresh")
            transport.answer.open()
            #expect(try await signOut.value.hadSession)
            await #expect(throws: AuthError.notSignedIn) { _ = try await refresh.value }
            #expect(try await client.sessions.storedSession() == nil)
            await #expect(try store.listKeys().isEmpty)
            #expect(client.sessions.state == .unauthenticated(.signedOut))
            await #expect(throws: AuthError.notSignedIn) { _ = try await client.getAccessToken() }
        }

        @Test("a refresh in flight while another client on the same store signs out does not resurrect the session")
        func refreshAfterSignOutElsewhere() async throws {
            let provider = try Glewlwyd.require()
            let transport = HeldRefreshTransport()
            let store = InMemoryStore()  // no cross-process lock: the sign-out lands mid-refresh
            let refreshing = try await OIDCClient(configuration: provider.configuration(), store: store, transport: transport, logger: .credentialVaultSilent)
            let other = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            _ = try await GlewlwydTests.signIn(refreshing, provider, browser: try await TestBrowser.signIn(provider))
            let refresh = Task { try await refreshing.getAccessToken(forceRefresh: true) }
            #expect(await transport.refreshes.reached(1), "the provider refreshed; its answer is held")
            #expect(try await other.signOut().hadSession)
            transport.answer.open()
            await #expect(throws: AuthError.notSignedIn) { _ = try await refresh.value }
            await #expect(try store.listKeys().isEmpty)
            #expect(refreshing.sessions.state == .unauthenticated(.signedOut), "the session it had disappeared")
        }

        @Test("proactive background refresh runs ahead of expiry without any caller")
        func proactiveRefresh() async throws {
            let provider = try Glewlwyd.require()
            let transport = CountingTransport()
            let clock = ManualClock()
            let client = try await OIDCClient(
                configuration: provider.configuration(proactive: true), store: InMemoryStore(), transport: transport, clock: clock,
                logger: .credentialVaultSilent)
            // The loop's first wait passes at once, moving the client's clock to the refresh margin.
            let background = BackgroundWaits(advancing: clock, passing: 1)
            await background.install(in: client.sessions)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(await background.began.reached(2), "the loop refreshed after its first wait and waits again")
            await client.sessions.stopAutoRefresh()
            #expect(try #require(background.delays.all.first) > .seconds(60), "it waited for the margin, not at once")
            #expect(transport.tokenRequests("refresh_token") == 1)
            let stored = try #require(try await client.sessions.storedSession())
            #expect(stored.accessToken != first.accessToken)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: stored.accessToken) == 200)
        }

        @Test("the state stream reports unauthenticated, authenticated, refreshing, authenticated, unauthenticated")
        func stateStream() async throws {
            let provider = try Glewlwyd.require()
            let client = try await OIDCClient(configuration: provider.configuration(), store: InMemoryStore(), logger: .credentialVaultSilent)
            let stream = client.states()
            let collector = Task {
                var seen: [AuthState] = []
                for await state in stream {
                    seen.append(state)
                    if seen.count == 5 { break }
                }
                return seen
            }
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            _ = try await client.getAccessToken(forceRefresh: true)
            try await client.signOut()
            let states = await collector.value
            let subject = try #require(session.user?.subject)
            #expect(states.map(\.shape) == [
                "unauthenticated(never signed in)", "authenticated(\(subject))", "refreshing", "authenticated(\(subject))",
                "unauthenticated(signed out)",
            ])
            #expect(states[1] != states[3], "the refreshed session's expiry is published")
        }
    }
}
