import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// DPoP (RFC 9449) against glewlwyd's "dpop" plugin, where every proof needs the server's nonce.
    @Suite("DPoP with mandatory nonces", .ownThread)
    struct DPoP {
        let provider: Glewlwyd
        init() throws { provider = try Glewlwyd.require() }

        /// A DPoP client of `cli` over `store`, counting its requests.
        func client(_ store: any AsyncTokenStorageAdapter = InMemoryStore()) async throws -> (OIDCClient, CountingTransport) {
            let transport = CountingTransport()
            let client = try await OIDCClient(
                configuration: provider.dpopConfiguration(), store: store, transport: transport, logger: .credentialVaultSilent)
            return (client, transport)
        }

        /// The claims of a JWT (no verification: the provider's own access token, read to check `cnf`).
        static func claims(_ jwt: String) throws -> [String: JSONValue] {
            let payload = try #require(jwt.split(separator: ".").dropFirst().first)
            return try #require(try JSONValue.parse(Base64URL.decode(String(payload))).objectValue)
        }

        func userinfoURL() -> URL { provider.dpopIssuer.appendingPathComponent("userinfo") }

        @Test("sign-in binds the tokens to the session's key: token_type DPoP, cnf.jkt is the key's thumbprint, Bearer use refused")
        func signInBindsTheTokens() async throws {
            let (client, transport) = try await client()
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(session.isDPoPBound)
            let key = try DPoPProver.key(stored: try #require(session.dpopKey))
            let cnf = try #require(try Self.claims(session.accessToken)["cnf"]?.objectValue)
            #expect(cnf["jkt"]?.stringValue == key.thumbprint)
            // At most the nonce challenge and its retry.
            #expect((1...2).contains(transport.tokenRequests("authorization_code")))
            #expect(try await GlewlwydTests.userinfoStatus(provider, issuer: provider.dpopIssuer, token: session.accessToken) == 401)
        }

        @Test("userinfo with the DPoP scheme and a proof carrying ath succeeds; the headers name the token's scheme")
        func userinfoWithProof() async throws {
            let (client, _) = try await client()
            _ = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let response = try await client.send(authorized: HTTPRequest(url: userinfoURL(), timeout: .seconds(10)))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self).contains("alice"))
            let headers = try await client.authorizationHeaders(for: userinfoURL(), method: "GET")
            #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true)
            let proof = try Self.claims(try #require(headers["DPoP"]))
            #expect(proof["ath"]?.stringValue == DPoPProof.accessTokenHash(try await client.getAccessToken()))
            #expect(proof["htu"]?.stringValue == userinfoURL().absoluteString)
        }

        @Test("a missing nonce is answered with one and the request retried exactly once")
        func missingNonceRetriedOnce() async throws {
            let (client, transport) = try await client()
            _ = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            // A new process without any nonce: its refresh is challenged once, then succeeds.
            let (fresh, freshTransport) = try await self.client(client.store)
            await fresh.provider.dpopNonces.clear()
            _ = try await fresh.getAccessToken(forceRefresh: true)
            #expect(freshTransport.tokenRequests("refresh_token") == 2)
            _ = transport
        }

        @Test("the key survives a restart (the next process refreshes with it) and is gone after sign-out, tokens revoked")
        func keyLivesWithTheSession() async throws {
            let store = InMemoryStore()
            let (client, _) = try await client(store)
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let (restarted, _) = try await self.client(store)
            let refreshed = try await restarted.sessions.refresh(seen: try #require(try await restarted.sessions.storedSession()), force: true)
            #expect(refreshed.dpopKey == session.dpopKey)
            #expect(refreshed.accessToken != session.accessToken)
            let result = try await restarted.signOut()
            #expect(result.revoked, "\(String(describing: result.revocationError))")
            #expect(try await store.load(provider.dpopConfiguration().sessionKey) == nil)
            #expect(try await store.load(provider.dpopConfiguration().dpopNonceKey) == nil)
        }

        /// Sends GET userinfo with `proof` and the session's access token.
        func userinfo(_ client: OIDCClient, proof: String) async throws -> Int {
            let token = try await client.getAccessToken()
            return try await URLSessionTransport().send(HTTPRequest(
                url: userinfoURL(), headers: ["Authorization": "DPoP \(token)", "DPoP": proof], timeout: .seconds(10))).status
        }

        @Test("the provider refuses a proof for another URL and a replayed jti")
        func wrongURLAndReplayRefused() async throws {
            let (client, _) = try await client()
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            // A successful call first, so that the client holds the current nonce.
            #expect(try await client.send(authorized: HTTPRequest(url: userinfoURL(), timeout: .seconds(10))).status == 200)
            let key = try DPoPProver.key(stored: try #require(session.dpopKey))
            let nonce = await client.provider.dpopNonces.nonce(for: userinfoURL())
            let wrong = try DPoPProof(
                method: "GET", url: provider.dpopIssuer.appendingPathComponent("token"), now: Date(), accessToken: session.accessToken,
                nonce: nonce
            ).signed(by: key)
            #expect(try await userinfo(client, proof: wrong) == 401)
            let proof = try DPoPProof(method: "GET", url: userinfoURL(), now: Date(), accessToken: session.accessToken, nonce: nonce)
                .signed(by: key)
            #expect(try await userinfo(client, proof: proof) == 200)
            #expect(try await userinfo(client, proof: proof) == 401)
        }

        @Test("device grant with DPoP: the device code is bound by dpop_jkt, polling sends proofs, the tokens are bound")
        func deviceGrant() async throws {
            let (client, transport) = try await client()
            let browser = try await TestBrowser.signIn(provider)
            let issuer = provider.dpopIssuer
            let session = try await client.signInWithDevice { authorization in
                Task { try? await browser.approveDevice(userCode: authorization.userCode, issuer: issuer) }
            }
            #expect(session.isDPoPBound)
            let key = try DPoPProver.key(stored: try #require(session.dpopKey))
            #expect(try Self.claims(session.accessToken)["cnf"]?.objectValue?["jkt"]?.stringValue == key.thumbprint)
            #expect(transport.tokenRequests(OIDCClient.deviceCodeGrant) >= 1)
            #expect(try await client.send(authorized: HTTPRequest(url: userinfoURL(), timeout: .seconds(10))).status == 200)
        }

        @Test("a refresh signed by another key is refused by the token endpoint and does not burn the refresh token")
        func refreshWithAnotherKeyRefused() async throws {
            let store = InMemoryStore()
            let (client, _) = try await client(store)
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let storage = SessionStorage(store: store, key: provider.dpopConfiguration().sessionKey, options: .default)
            var forged = session
            forged.dpopKey = try DPoPProver.newKey().pem
            try await storage.save(forged)
            let (other, _) = try await self.client(store)
            do {
                _ = try await other.sessions.refresh(seen: forged, force: true)
                Issue.record("a proof by another key was accepted")
            } catch .providerError(let code, _) {
                #expect(code == "invalid_dpop_proof")
            }
            try await storage.save(session)
            let (owner, _) = try await self.client(store)
            let refreshed = try await owner.sessions.refresh(seen: session, force: true)
            #expect(refreshed.accessToken != session.accessToken)
        }
    }
}
