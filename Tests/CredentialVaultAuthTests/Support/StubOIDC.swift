import Logging
import CredentialVault
import Foundation

@testable import CredentialVaultAuth

/// An OpenID client of a `StubProvider`: issuer `http://127.0.0.1:<port>`, preset metadata
/// with `/authorize`, `/token`, `/jwks`, `/revoke`, `/device` there, and sign-in through
/// `handleRedirect` (the stub's token endpoint decides what comes back).
enum StubOIDC {
    static let redirectURI = "http://127.0.0.1:53682/callback"

    static func metadata(_ stub: StubProvider) -> ProviderMetadata {
        ProviderMetadata(
            issuer: stub.base, authorizationEndpoint: stub.url("/authorize"), tokenEndpoint: stub.url("/token"),
            jwksURI: stub.url("/jwks"), revocationEndpoint: stub.url("/revoke"), deviceAuthorizationEndpoint: stub.url("/device"))
    }

    static func configuration(
        _ stub: StubProvider, scopes: [String] = ["profile"], session: SessionManager.Configuration = .init(proactiveRefresh: false),
        edit: (inout ProviderMetadata) -> Void = { _ in }
    ) -> OIDCConfiguration {
        var metadata = metadata(stub)
        edit(&metadata)
        var configuration = OIDCConfiguration(
            issuer: URL(string: stub.base)!, clientID: "cli", scopes: scopes, metadata: metadata, requestTimeout: .seconds(5),
            session: session)
        configuration.session.retryPolicy = .none
        return configuration
    }

    static func client(
        _ stub: StubProvider, scopes: [String] = ["profile"], session: SessionManager.Configuration = .init(proactiveRefresh: false),
        store: any AsyncTokenStorageAdapter = InMemoryStore(), clock: any CredentialClock = SystemClock(),
        edit: (inout ProviderMetadata) -> Void = { _ in }
    ) async throws -> OIDCClient {
        try await OIDCClient(
            configuration: configuration(stub, scopes: scopes, session: session, edit: edit), store: store, clock: clock,
            logger: .credentialVaultSilent)
    }

    /// Begins a sign-in and hands its redirect (`code=c`, plus `extra`) to the client.
    @discardableResult
    static func signIn(_ client: OIDCClient, extra: String = "") async throws -> AuthSession {
        let request = try await client.beginAuthorization(redirectURI: redirectURI)
        return try await client.handleRedirect(url: URL(string: "\(redirectURI)?code=c&state=\(request.state)\(extra)")!)
    }

    /// A token answer.
    static func tokens(access: String = "at", refresh: String? = "rt", expiresIn: String = "3600", idToken: String? = nil) -> StubProvider.Reply {
        var members = [#""access_token":"\#(access)""#, #""token_type":"Bearer""#, #""expires_in":\#(expiresIn)"#]
        if let refresh { members.append(#""refresh_token":"\#(refresh)""#) }
        if let idToken { members.append(#""id_token":"\#(idToken)""#) }
        return .json("{" + members.joined(separator: ",") + "}")
    }
}
