import CredentialVault
@testable import CredentialVaultAuth
import CredentialVaultTesting
import CredentialVaultTestSupport
import Foundation
import Testing

extension InsForgeEndToEnd {
    /// The session on the shared session manager: refresh through `/refresh`, single flight,
    /// retries, refused refresh tokens, persistence in a sealed-file vault.
    @Suite("session", .ownThread) struct Session {
        typealias Server = InsForgeTestServer

        /// A signed-in client (and its e-mail address).
        func signedIn(
            _ server: Server, store: any AsyncTokenStorageAdapter = InMemoryStore(),
            session: SessionManager.Configuration = .init(proactiveRefresh: false), transport: any HTTPTransport = URLSessionTransport(),
            clock: any CredentialClock = SystemClock()
        ) async throws -> (InsForgeClient, String) {
            let client = try await server.client(store: store, session: session, transport: transport, clock: clock)
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            try await server.resetStats()
            return (client, email)
        }

        @Test("a refresh issues new access and refresh tokens and stores them", arguments: InsForgeClientType.allCases)
        func refreshIssuesNewTokens(clientType: InsForgeClientType) async throws {
            let server = try await Server.fresh()
            let store = InMemoryStore()
            let client = try await server.client(store: store, clientType: clientType)
            try await client.signIn(email: try await { () async throws -> String in
                let email = Server.email()
                try await client.signUp(email: email, password: Server.password)
                return email
            }(), password: Server.password)
            try await server.resetStats()
            let before = try #require(try await client.storedSession())
            let token = try await client.getAccessToken(forceRefresh: true)
            let after = try #require(try await client.storedSession())
            #expect(token != before.accessToken && after.accessToken == token)
            #expect(after.refreshToken != nil && after.refreshToken != before.refreshToken, "rotated and persisted")
            #expect(after.user == before.user)
            let stats = try await server.stats()
            #expect(stats["refresh"] == 1)
            let refresh = try await server.requests().first { $0["operation"]?.stringValue == "refresh" }
            #expect(refresh?["query"]?["client_type"]?.stringValue == clientType.rawValue && refresh?["status"] == 200)
            #expect(try await client.getCurrentUser().id == before.user?.subject)
            #expect(try await client.getAccessToken() == token, "a fresh token is not refreshed again")
            #expect(try await server.stats()["refresh"] == 1)
        }

        @Test("an access token the backend refuses is refreshed once and the request repeated")
        func refusedAccessTokenIsRefreshed() async throws {
            let server = try await Server.fresh()
            let (client, email) = try await signedIn(server)
            try await server.expireAccessTokens()
            #expect(try await client.getCurrentUser().email == email)
            let stats = try await server.stats()
            #expect(stats["refresh"] == 1 && stats["sessionsCurrent"] == 2)
        }

        /// The `exp` claim of a JWT, as a date.
        static func expiry(ofJWT token: String) throws -> Date {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            try #require(parts.count == 3, "not a JWT")
            let claims = try JSONValue.parse(Data(try Base64URL.decode(String(parts[1]))))
            return Date(timeIntervalSince1970: try #require(claims["exp"]?.numberValue))
        }

        @Test("the expiry comes from the JWT; a token past half its lifetime is refreshed before use, a fresh one is not")
        func nearExpiryRefresh() async throws {
            let server = try await Server.fresh(["accessTokenTtlSeconds": 30])
            let clock = ManualClock()
            let (client, _) = try await signedIn(server, clock: clock)
            let stored = try #require(try await client.storedSession())
            let exp = try Self.expiry(ofJWT: stored.accessToken)
            let expiresAt = try #require(stored.expiresAt)
            #expect(abs(expiresAt.timeIntervalSince(exp)) < 0.001, "stored \(expiresAt), exp \(exp)")
            _ = try await client.getAccessToken()
            #expect(try await server.stats()["refresh"] ?? 0 == 0, "30 s left of 30: not due")
            clock.advance(by: .seconds(25))  // past half of its lifetime, on the client's clock
            let token = try await client.getAccessToken()
            #expect(token != stored.accessToken)
            #expect(try await server.stats()["refresh"] == 1)
        }

        @Test("concurrent callers share one refresh")
        func singleFlight() async throws {
            let server = try await Server.fresh()
            let clock = ManualClock()
            let transport = HeldRefreshTransport()
            let (client, _) = try await signedIn(server, transport: transport, clock: clock)
            clock.advance(by: .seconds(3600))  // the 15-minute token has expired
            let started = Arrivals()
            let callers = (0..<8).map { _ in
                Task {
                    started.arrive()
                    return try await client.getAccessToken()
                }
            }
            #expect(await transport.refreshes.reached(1), "the server refreshed; its answer is held")
            #expect(await started.reached(8))
            transport.answer.open()
            var tokens: [String] = []
            for caller in callers { tokens.append(try await caller.value) }
            #expect(Set(tokens).count == 1)
            #expect(try await server.stats()["refresh"] == 1)
            #expect(try await client.storedSession()?.accessToken == tokens.first)
        }

        @Test("a refused refresh token ends the session: invalidGrant, session deleted, unauthenticated")
        func refusedRefreshToken() async throws {
            let server = try await Server.fresh()
            let store = InMemoryStore()
            let (client, _) = try await signedIn(server, store: store)
            try await server.revokeRefreshTokens()
            do {
                _ = try await client.getAccessToken(forceRefresh: true)
                Issue.record("a revoked refresh token was accepted")
            } catch .auth(.invalidGrant) {
            } catch { Issue.record("unexpected \(error)") }
            await #expect(try store.load(client.configuration.sessionKey) == nil)
            #expect(client.state == .unauthenticated(.refreshRefused))
            #expect(try await server.stats()["refresh"] == 1, "a definite refusal is not retried")
        }

        @Test("transient refresh failures are retried with backoff, then reported; the session stays")
        func transientRefreshFailuresAreRetried() async throws {
            let server = try await Server.fresh()
            let waits = Recorder<Duration>()
            let retry = RetryPolicy(maxRetries: 2, initialDelay: .milliseconds(10), sleep: { waits.append($0) })
            let (client, _) = try await signedIn(server, session: .init(retryPolicy: retry, proactiveRefresh: false))
            try await server.configure(["forceRateLimit": ["refresh"]])
            do {
                _ = try await client.getAccessToken(forceRefresh: true)
                Issue.record("the refresh succeeded while rate limited")
            } catch .rateLimited(let after, _) {
                #expect(after == 60)
            } catch { Issue.record("unexpected \(error)") }
            #expect(try await server.stats()["refresh"] == 3)
            #expect(waits.count == 2)
            #expect(try await client.storedSession() != nil)
            try await server.configure(["forceRateLimit": []])
            _ = try await client.getAccessToken(forceRefresh: true)
            #expect(try await server.stats()["refresh"] == 4)
        }

        @Test("a deleted user's refresh is refused and the session deleted")
        func deletedUserRefresh() async throws {
            let server = try await Server.fresh()
            let (client, email) = try await signedIn(server)
            try await server.deleteUser(email)
            let refused = await #expect(throws: InsForgeError.self) { _ = try await client.getAccessToken(forceRefresh: true) }
            guard case .auth(.invalidGrant)? = refused else {
                Issue.record("expected the refresh refused (invalidGrant), got \(String(describing: refused))")
                return
            }
            #expect(try await client.storedSession() == nil)
        }

        @Test("the state stream follows sign-in, refresh and sign-out")
        func stateStream() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            var states = client.states().makeAsyncIterator()
            #expect(await states.next() == .unauthenticated(.neverSignedIn))
            let email = Server.email()
            let response = try await client.signUp(email: email, password: Server.password)
            let user = try #require(response.user?.authUser)
            #expect(await states.next()?.session?.user == user)
            _ = try await client.getAccessToken(forceRefresh: true)
            #expect(await states.next() == .refreshing)
            #expect(await states.next()?.session?.user == user)
            try await client.signOut()
            #expect(await states.next() == .unauthenticated(.signedOut))
        }

        @Test("the session persists in a sealed-file vault and a new client reloads it")
        func sealedFileVault() async throws {
            let server = try await Server.fresh()
            let vault = try TemporaryVault()
            let email = Server.email()
            let signedIn: AuthSession
            do {
                let client = try await server.client(store: try vault.open())
                try await client.signUp(email: email, password: Server.password)
                signedIn = try #require(try await client.storedSession())
            }
            let raw = try Data(contentsOf: vault.url)
            #expect(raw.range(of: Data(signedIn.accessToken.utf8)) == nil, "sealed, not plaintext")
            #expect(raw.range(of: Data(try #require(signedIn.refreshToken).utf8)) == nil)

            let client = try await server.client(store: try vault.open())
            #expect(client.state == .authenticated(SessionSummary(signedIn)), "the new client read the vault at init")
            #expect(try await client.storedSession() == signedIn)
            #expect(try await client.getCurrentUser().email == email)
            _ = try await client.getAccessToken(forceRefresh: true)
            let third = try await server.client(store: try vault.open())
            #expect(try await third.storedSession()?.accessToken == (try await client.storedSession()?.accessToken))
            try await third.signOut()
            await #expect(try vault.open().listKeys().isEmpty)
        }
    
        @Test("credentials(minTTL:) and hasUsableSession forward; beyond the 15-minute tokens: tokenLifetimeTooShort")
        func credentialsAndUsableSession() async throws {
            let server = try await Server.fresh()
            let (client, _) = try await signedIn(server)
            #expect(client.hasUsableSession)
            #expect(try await client.credentials(minTTL: .seconds(300)).refreshToken != nil)
            let error = await #expect(throws: InsForgeError.self) { _ = try await client.credentials(minTTL: .seconds(3600)) }
            guard case .auth(let auth) = error, case .tokenLifetimeTooShort(let lifetime, let minTTL) = auth else {
                Issue.record("not tokenLifetimeTooShort: \(String(describing: error))")
                return
            }
            #expect(lifetime <= .seconds(900) && minTTL == .seconds(3600))
            let refreshes = try await server.stats()["refresh"] ?? 0
            #expect(refreshes == 0, "the token just obtained is fresh: no refresh")
            try await client.signOut()
            #expect(!client.hasUsableSession)
        }

        @Test("a client on a locked store says storeLocked, never signed out; reload() after the unlock")
        func lockedStore() async throws {
            let server = try await Server.fresh()
            let store = InMemoryStore()
            let (signedIn, email) = try await self.signedIn(server, store: store)
            let session = try #require(try await signedIn.storedSession())
            let keyring = FaultInjectingStore(wrapping: store)
            keyring.inject(.fail(.locked), into: .load)
            let client = try await server.client(store: keyring)
            #expect(client.state == .unauthenticated(.storeLocked))
            await #expect(throws: InsForgeError.auth(.storage(.locked))) { _ = try await client.getCurrentUser() }
            keyring.clear()
            #expect(await client.reload() == .authenticated(SessionSummary(session)))
            #expect(try await client.getCurrentUser().email == email)
        }
    }
}
