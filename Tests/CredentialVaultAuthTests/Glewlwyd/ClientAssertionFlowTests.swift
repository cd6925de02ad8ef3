import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// `private_key_jwt` and `client_secret_jwt` against glewlwyd's clients `pk-es256`,
    /// `pk-rs256`, `pk-eddsa` (client credentials), `pk-code` (code + refresh) and `sj`
    /// (provisioned by scripts/glewlwyd/provision.sh with the keys of make-keys.sh).
    @Suite("client assertions: private_key_jwt and client_secret_jwt", .ownThread)
    struct ClientAssertions {
        /// The PEM key of the provisioned client `clientID` (`pk-es256`...), with that kid.
        static func key(_ provider: Glewlwyd, _ file: String, keyID: String) throws -> JWSSigningKey {
            let directory = try #require(ProcessInfo.processInfo.environment["GLEWLWYD_CLIENT_KEY_DIR"], "GLEWLWYD_CLIENT_KEY_DIR is not set")
            let pem = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(file))
            return try JWSSigningKey(privateKey: SecureBytes(copying: Array(pem)), keyID: keyID)
        }

        static func secret(_ name: String) throws -> String {
            let directory = try #require(ProcessInfo.processInfo.environment["GLEWLWYD_CLIENT_KEY_DIR"])
            return try String(contentsOfFile: directory + "/" + name, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        static func client(
            _ provider: Glewlwyd, _ clientID: String, _ authentication: ClientAuthentication, clock: any CredentialClock = SystemClock()
        ) throws -> ClientCredentialsClient {
            try ClientCredentialsClient(
                configuration: OIDCConfiguration(issuer: provider.issuer, clientID: clientID, clientAuthentication: authentication),
                scopes: ["api"], store: InMemoryStore(), clock: clock, logger: .credentialVaultSilent)
        }

        /// A client-credentials request made by hand with `assertion`; the HTTP status.
        static func post(_ provider: Glewlwyd, clientID: String, assertion: String) async throws -> Int {
            let body = FormEncoding.body([
                ("grant_type", "client_credentials"), ("scope", "api"), ("client_id", clientID),
                ("client_assertion_type", ClientAssertion.type), ("client_assertion", assertion),
            ])
            let response = try await URLSessionTransport().send(HTTPRequest(
                method: "POST", url: provider.issuer.appendingPathComponent("token"),
                headers: ["Content-Type": "application/x-www-form-urlencoded"], body: body, timeout: .seconds(10)))
            return response.status
        }

        @Test(
            "private_key_jwt client credentials work with each algorithm glewlwyd accepts",
            arguments: [("pk-es256", "client-es256.pem", JWSAlgorithm.es256), ("pk-rs256", "client-rs256.pem", .rs256), ("pk-eddsa", "client-eddsa.pem", .edDSA)])
        func clientCredentials(clientID: String, file: String, algorithm: JWSAlgorithm) async throws {
            let provider = try Glewlwyd.require()
            let key = try Self.key(provider, file, keyID: clientID)
            #expect(key.algorithm == algorithm)
            let client = try Self.client(provider, clientID, .privateKeyJWT(key: key))
            let token = try await client.accessToken()
            #expect(!token.isEmpty)
            // A second request signs a new assertion (a reused one would be refused as a replay).
            #expect(try await client.accessToken(forceRefresh: true) != token)
        }

        @Test("the client's key is read from the vault")
        func keyFromVault() async throws {
            let provider = try Glewlwyd.require()
            let directory = try #require(ProcessInfo.processInfo.environment["GLEWLWYD_CLIENT_KEY_DIR"])
            let store = InMemoryStore()
            let credential = CredentialKey(service: "client-keys", account: "pk-eddsa")
            try await store.save(
                try Data(contentsOf: URL(fileURLWithPath: directory + "/client-eddsa.pem")), for: credential, options: .default)
            let key = try await JWSSigningKey.load(credential, from: store, keyID: "pk-eddsa")
            #expect(try await Self.client(provider, "pk-eddsa", .privateKeyJWT(key: key)).accessToken().isEmpty == false)
        }

        @Test("client_secret_jwt client credentials work")
        func clientSecretJWT() async throws {
            let provider = try Glewlwyd.require()
            let client = try Self.client(provider, "sj", .clientSecretJWT(secret: try Self.secret("sj-secret")))
            #expect(try await client.accessToken().isEmpty == false)
            let wrong = try Self.client(provider, "sj", .clientSecretJWT(secret: "not-the-secret-but-just-as-long-as-one"))
            await #expect(throws: AuthError.invalidCredentials) { _ = try await wrong.accessToken() }
        }

        @Test("a replayed assertion (same jti) is refused")
        func replayedAssertion() async throws {
            let provider = try Glewlwyd.require()
            let key = try Self.key(provider, "client-es256.pem", keyID: "pk-es256")
            let assertion = try ClientAssertion.make(
                clientID: "pk-es256", audience: provider.issuer.appendingPathComponent("token").absoluteString,
                signer: JWSSigner(key: key), now: Date())
            let logOffset = provider.logSize()
            #expect(try await Self.post(provider, clientID: "pk-es256", assertion: assertion) == 200)
            // glewlwyd refuses with a bare 403 (RFC 6749 5.2 would be 400/401 invalid_client).
            #expect(try await Self.post(provider, clientID: "pk-es256", assertion: assertion) == 403)
            #expect(provider.log(from: logOffset).contains("jti already used for client 'pk-es256'"))
        }

        @Test(
            "an assertion for another audience is refused (glewlwyd wants the endpoint's URL, not its issuer)",
            arguments: [ClientAssertionAudience.issuer, .explicit("https://elsewhere.example/token")])
        func wrongAudience(audience: ClientAssertionAudience) async throws {
            let provider = try Glewlwyd.require()
            let key = try Self.key(provider, "client-es256.pem", keyID: "pk-es256")
            let client = try Self.client(provider, "pk-es256", .privateKeyJWT(key: key, audience: audience))
            await #expect(throws: AuthError.invalidCredentials) { _ = try await client.accessToken() }
            // The token endpoint's URL, given explicitly, is what glewlwyd accepts.
            let explicit = try Self.client(
                provider, "pk-es256",
                .privateKeyJWT(key: key, audience: .explicit(provider.issuer.appendingPathComponent("token").absoluteString)))
            #expect(try await explicit.accessToken().isEmpty == false)
        }

        @Test("an expired assertion is refused")
        func expiredAssertion() async throws {
            let provider = try Glewlwyd.require()
            let key = try Self.key(provider, "client-es256.pem", keyID: "pk-es256")
            // Signed by a client whose clock is five minutes late: its assertion expired long ago.
            let client = try Self.client(provider, "pk-es256", .privateKeyJWT(key: key), clock: ManualClock(start: Date().addingTimeInterval(-300)))
            await #expect(throws: AuthError.invalidCredentials) { _ = try await client.accessToken() }
        }

        @Test("a key the client did not register is refused")
        func unregisteredKey() async throws {
            let provider = try Glewlwyd.require()
            let client = try Self.client(provider, "pk-es256", .privateKeyJWT(key: try JWSSigningKey.generate(.es256, keyID: "pk-es256")))
            await #expect(throws: AuthError.invalidCredentials) { _ = try await client.accessToken() }
        }

        @Test("sign-in, refresh and revocation with private_key_jwt")
        func codeRefreshRevocation() async throws {
            let provider = try Glewlwyd.require()
            let key = try Self.key(provider, "client-es256.pem", keyID: "pk-code")
            var configuration = provider.configuration()
            configuration.clientID = "pk-code"
            configuration.clientAuthentication = .privateKeyJWT(key: key)
            let client = try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let consent = try await browser.request(
                "PUT", provider.api.appendingPathComponent("auth/grant/pk-code"), body: Data(#"{"scope":"openid"}"#.utf8), json: true)
            #expect(consent.status == 200)
            let session = try await GlewlwydTests.signIn(client, provider, browser: browser)
            #expect(session.user?.email == "alice@example.com")
            let refreshToken = try #require(session.refreshToken)
            let refreshed = try await client.getAccessToken(forceRefresh: true)
            #expect(refreshed != session.accessToken)
            let stored = try #require(try await client.sessions.storedSession())
            #expect(stored.refreshToken != refreshToken)  // rotated
            let result = try await client.signOut(includeIDTokenHint: false)
            #expect(result.revoked, "revocation: \(result.revocationError?.description ?? "")")
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: refreshed) == 401)
        }

        @Test("device authorization and polling with private_key_jwt")
        func deviceFlow() async throws {
            let provider = try Glewlwyd.require()
            var configuration = provider.configuration()
            configuration.clientID = "pk-code"
            configuration.clientAuthentication = .privateKeyJWT(key: try Self.key(provider, "client-es256.pem", keyID: "pk-code"))
            let client = try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let consent = try await browser.request(
                "PUT", provider.api.appendingPathComponent("auth/grant/pk-code"), body: Data(#"{"scope":"openid"}"#.utf8), json: true)
            #expect(consent.status == 200)
            let session = try await client.signInWithDevice { authorization in
                Task { try? await browser.approveDevice(userCode: authorization.userCode, issuer: provider.issuer) }
            }
            #expect(session.user?.email == "alice@example.com")
        }
    }
}
