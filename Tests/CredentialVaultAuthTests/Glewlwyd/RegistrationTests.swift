import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CredentialVaultAuth

// Nested in the serialized glewlwyd suite: these tests sign the provider's user in like the
// other glewlwyd suites, and a loopback sign-in run in parallel with them timed out.
extension GlewlwydTests {
    /// Dynamic client registration (RFC 7591/7592) against glewlwyd's `reg` plugin, which
    /// `scripts/glewlwyd/provision-registration.sh` opens for registration.
    @Suite("dynamic client registration (glewlwyd)")
    struct Registration {
        /// The registration plugin's issuer.
        static func issuer(_ provider: Glewlwyd) -> URL { provider.api.appendingPathComponent("reg") }

        /// A port nobody listens on now (glewlwyd matches loopback redirects with their port, so
        /// the redirect is registered with the port the listener will bind).
        static func freePort() throws -> UInt16 {
            let (fd, port) = try LoopbackSocket.bound()
            close(fd)
            return port
        }

        static func registration(_ provider: Glewlwyd) async throws -> ClientRegistration {
            let metadata = try await ResourceAuthorizationDiscovery().authorizationServerMetadata(issuer: issuer(provider))
            return try ClientRegistration(provider: metadata)
        }

        /// A public native client registered at the `reg` plugin and signed in through the
        /// loopback listener (the user consents to it first, as glewlwyd asks of every client).
        static func signInRegistered(
            _ provider: Glewlwyd
        ) async throws -> (registration: ClientRegistration, client: RegisteredClient, session: AuthSession, redirect: String) {
            let port = try freePort()
            let redirect = "http://127.0.0.1:\(port)/callback"
            let registration = try await registration(provider)
            let client = try await registration.register(
                .publicNative(redirectURIs: [redirect], clientName: "CredentialVault test", scope: "openid"))
            let browser = try await TestBrowser.signIn(provider)
            let consent = try await browser.request(
                "PUT", provider.api.appendingPathComponent("auth/grant/\(client.clientID)"), body: Data(#"{"scope":"openid"}"#.utf8),
                json: true)
            guard consent.status == 200 else { throw TestBrowser.Failure(description: "consent failed: HTTP \(consent.status)") }
            let oidc = try await OIDCClient(
                configuration: OIDCConfiguration(issuer: issuer(provider), clientID: client.clientID, clientAuthentication: client.clientAuthentication),
                store: InMemoryStore(), logger: .credentialVaultSilent)
            let pages = PageBox()
            let session = try await oidc.signIn(
                browser: browser.opener(pages: pages), redirect: LoopbackRedirect(port: .fixed(port)), timeout: .seconds(30))
            guard try await pages.result().status == 200 else { throw TestBrowser.Failure(description: "the redirect page failed") }
            return (registration, client, session, redirect)
        }

        @Test("a registered public native client signs in with code + PKCE, and is read, updated and deleted with its registration token")
        func registerSignInAndManage() async throws {
            let provider = try Glewlwyd.require()
            let (registration, client, session, redirect) = try await Self.signInRegistered(provider)
            #expect(session.refreshToken != nil)
            #expect(!client.clientID.isEmpty)
            #expect(client.clientSecret == nil)
            #expect(client.clientSecretExpiresAt == nil)
            let token = try #require(client.registrationAccessToken)
            #expect(client.registrationClientURI?.absoluteString.hasPrefix(registration.endpoint.absoluteString) == true)
            #expect(!"\(client)".contains(token.reveal()))
            #expect(!"\(token)".contains(token.reveal()))

            // Kept in the vault and read back whole.
            let store = InMemoryStore()
            let key = CredentialKey(service: "credential-vault.registration", account: client.clientID)
            try await client.save(to: store, key: key)
            #expect(try await RegisteredClient.load(from: store, key: key) == client)
            #expect(try await store.metadata(for: key)?.accessibility == .deviceOnly)

            // RFC 7592: read (glewlwyd omits the token and URI: the stored ones are kept), update, delete.
            let read = try await registration.read(client)
            #expect(read.clientID == client.clientID)
            #expect(read.registrationAccessToken == token)
            #expect(read.metadata["client_name"]?.stringValue == "CredentialVault test")
            var renamed = ClientMetadata.publicNative(redirectURIs: [redirect], clientName: "CredentialVault renamed", scope: "openid")
            renamed.redirectURIs.append(redirect + "/other")
            let updated = try await registration.update(client, to: renamed)
            #expect(updated.metadata["client_name"]?.stringValue == "CredentialVault renamed")
            #expect(updated.metadata["redirect_uris"]?.arrayValue?.count == 2)
            try await registration.delete(updated)
            await #expect(throws: AuthError.invalidCredentials) { _ = try await registration.read(updated) }
        }

        @Test("a registration without redirect URIs is refused with the provider's RFC 7591 error code")
        func registrationWithoutRedirectIsRefused() async throws {
            let provider = try Glewlwyd.require()
            let registration = try await Self.registration(provider)
            let error = await #expect(throws: AuthError.self) {
                _ = try await registration.register(.publicNative(redirectURIs: [], clientName: "no redirect"))
            }
            guard case .providerError(let code, _)? = error else {
                Issue.record("expected a provider error, got \(String(describing: error))")
                return
            }
            #expect(code == "invalid_redirect_uri")
        }

        @Test("a provider without registration_endpoint is reported as unsupported")
        func noRegistrationEndpoint() async throws {
            let provider = try Glewlwyd.require()
            let metadata = try await ResourceAuthorizationDiscovery().authorizationServerMetadata(issuer: provider.issuer)
            #expect(metadata.registrationEndpoint == nil)
            #expect(throws: AuthError.self) { _ = try ClientRegistration(provider: metadata) }
        }
    }
}
