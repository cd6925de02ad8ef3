import Logging
import Foundation

/// What a sign-out did.
public struct SignOutResult: Sendable {
    /// Whether a session was stored (and is now deleted).
    public let hadSession: Bool
    /// Whether the refresh token (and access token) were revoked at the provider.
    public let revoked: Bool
    /// Why revocation did not happen, if it was attempted and failed or was impossible.
    public let revocationError: AuthError?
    /// The provider's end-session URL (RP-initiated logout), to open in the browser if the
    /// user should also leave the provider's own session; `nil` when the provider has none.
    public let endSessionURL: URL?
}

extension OIDCClient {
    /// Signs out: deletes the stored session (a refresh finishing later does not write it
    /// back), revokes the refresh token and access token (RFC 7009) when the provider has a
    /// revocation endpoint, and offers the end-session URL.
    /// - Parameters:
    ///   - postLogoutRedirectURI: where the provider should send the browser after its logout.
    ///   - includeIDTokenHint: put the ID token into the end-session URL as `id_token_hint`.
    @discardableResult
    public func signOut(postLogoutRedirectURI: String? = nil, includeIDTokenHint: Bool = true) async throws(AuthError) -> SignOutResult {
        let removed = try await sessions.signOut(revoke: false)
        let metadata = try? await provider.metadata()
        var revoked = false
        var revocationError: AuthError?
        if let removed {
            if metadata?.revocationEndpoint != nil {
                do {
                    try await OIDCRefresher(provider: provider).revoke(removed)
                    revoked = true
                    logger.info("tokens revoked at the provider", metadata: ["category": "signout"])
                } catch {
                    revocationError = error
                    logger.warning("revocation failed: \(error)", metadata: ["category": "signout"])
                }
            } else {
                revocationError = .unsupported("the provider has no revocation endpoint")
            }
        }
        // The session's DPoP key went with the session record; its nonces go too (after the
        // revocation, whose answers may carry new ones).
        await provider.dpopNonces.clear()
        var endSession: URL?
        if let endpoint = metadata?.endSessionEndpoint {
            var parameters = [("client_id", configuration.clientID)]
            if includeIDTokenHint, let idToken = removed?.idToken { parameters.append(("id_token_hint", idToken)) }
            if let postLogoutRedirectURI { parameters.append(("post_logout_redirect_uri", postLogoutRedirectURI)) }
            endSession = FormEncoding.url(endpoint, adding: parameters)
        }
        return SignOutResult(hadSession: removed != nil, revoked: revoked, revocationError: revocationError, endSessionURL: endSession)
    }
}
