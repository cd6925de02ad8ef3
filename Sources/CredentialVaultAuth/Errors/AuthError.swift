import Foundation
import CredentialVault

/// Every failure of the auth client. Messages say what happened and what to do; they never
/// contain a token, a code, a verifier or a secret (provider texts are redacted and truncated).
///
/// Not frozen, under the rule `CredentialVaultError` states: a minor release may add a case, none
/// is removed or changes meaning or payload within a major version; end a `switch` with
/// `default:` and branch on cases and typed payloads (`status`, `retryAfterSeconds`, `code`),
/// never on message text.
public enum AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The client's own credentials (client id / secret) were rejected (`invalid_client`, 401).
    case invalidCredentials
    /// The provider definitively rejected the refresh token, authorization code or device code
    /// (`invalid_grant`): the user has to sign in again. The stored session has been deleted.
    case invalidGrant(String?)
    /// The redirect's `state` is missing, unknown, already used or does not match (possible CSRF).
    case stateMismatch
    /// The ID token's `nonce` is not the one sent with the authorization request (replay).
    case nonceMismatch
    /// The ID token failed verification (signature, issuer, audience, expiry, ...).
    case invalidIDToken(String)
    /// The provider could not be reached or the connection broke. Retrying later may help.
    case networkError(String)
    /// The request exceeded its deadline.
    case timedOut
    /// The provider answered 5xx. Retrying later may help.
    case serverUnavailable(status: Int)
    /// The provider answered 429 Too Many Requests. Retrying later may help.
    case rateLimited(retryAfterSeconds: Int?)
    /// The provider answered with an OAuth error (`error`, `error_description`).
    case providerError(code: String, description: String?)
    /// The user or the provider denied the authorization (`access_denied`).
    case accessDenied
    /// A pending sign-in (PKCE verifier) or a device code expired before it was completed.
    case authorizationExpired
    /// There is no signed-in session: sign in first.
    case notSignedIn
    /// The provider's answer is malformed or inconsistent (the reason says how).
    case invalidResponse(String)
    /// Discovery failed: the issuer's metadata is missing, malformed or names another issuer.
    case discoveryFailed(String)
    /// The provider or the configuration lacks something this operation needs.
    case unsupported(String)
    /// The client was configured with something invalid.
    case invalidConfiguration(String)
    /// `credentials(minTTL:)` asked for a token valid longer than the provider's tokens live,
    /// even freshly refreshed ones: ask for less (at most `lifetime`).
    case tokenLifetimeTooShort(lifetime: Duration, minTTL: Duration)
    /// The provider requires pushed authorization requests (RFC 9126
    /// `require_pushed_authorization_requests`) and the configuration forbids them
    /// (`PushedAuthorization.never`).
    case pushedAuthorizationRequired
    /// The provider refused a pushed authorization request without an OAuth error body (HTTP
    /// `status`; glewlwyd answers every PAR error with a bare 403): the client, its
    /// authentication, the redirect URI, the scopes or the PKCE challenge were not accepted.
    case pushedAuthorizationRefused(status: Int)
    /// The provider refused the resource asked for (`invalid_target`, RFC 8707 section 2):
    /// it is not allowed for this client or these scopes, or the session's refresh token no
    /// longer covers it (glewlwyd with rotating refresh tokens narrows the token to the last
    /// resource refreshed). The session is kept; sign in again asking for this resource.
    /// `resource` is the indicator asked for, `nil` when the sign-in asked for several.
    case invalidTarget(resource: String?)
    /// A token for `resource` (an indicator) was not refreshed from the session's refresh
    /// token: the provider rotates refresh tokens, and a rotated one may then be valid for this
    /// resource only (glewlwyd 2.7.5 narrows it so), which would end the main token's refreshes.
    /// Nothing was sent; the session is kept. Use a provider configuration that does not rotate
    /// refresh tokens, `OIDCConfiguration.rotatedRefreshTokensKeepResources` for a provider
    /// whose rotated tokens keep their resources, or a session signed in for this resource.
    case resourceRefreshWouldNarrow(resource: String)
    /// The session's refresh token was rotated in a refresh for `resource` (an indicator) and
    /// may be valid for that resource only: it is not used for the main token (which could
    /// come back as that resource's and be sent anywhere) nor for another resource. The tokens
    /// held are kept and `resource`'s still refreshes; sign in again for the others.
    case refreshTokenNarrowed(resource: String)
    /// A protected resource still answered `insufficient_scope` after the configured number
    /// of step-up sign-ins (`ProtectedResourceClient`); `scopes` are the ones it asked for last.
    /// Never retried automatically: a resource that keeps asking would otherwise loop forever.
    case insufficientScope(scopes: [String])
    /// The operation was cancelled.
    case cancelled
    /// The credential store failed.
    case storage(CredentialVaultError)

    /// `true` for failures that may pass on retry: network errors, timeouts, 5xx and 429.
    /// Nothing else is ever retried.
    public var isTransient: Bool {
        switch self {
        case .networkError, .timedOut, .serverUnavailable, .rateLimited: true
        default: false
        }
    }

    /// One line saying what happened and what to do.
    public var description: String {
        switch self {
        case .invalidCredentials:
            "the provider rejected the client credentials: check the client id and its secret, or for a signed"
                + " assertion its key, key id and audience and this machine's clock"
        case .invalidGrant(let why):
            "the provider rejected the grant" + (why.map { " (\($0))" } ?? "") + ": sign in again"
        case .stateMismatch:
            "the redirect's state is missing, unknown, expired or already used: start the sign-in again"
        case .nonceMismatch: "the ID token's nonce does not match the sign-in request: start the sign-in again"
        case .invalidIDToken(let why): "the ID token is not valid: \(why)"
        case .networkError(let why): "the provider could not be reached (\(why)): check the network and retry"
        case .timedOut: "the operation did not finish before its deadline: retry"
        case .serverUnavailable(let status): "the provider answered HTTP \(status): retry later"
        case .rateLimited(let after):
            "the provider is rate limiting requests" + (after.map { ": retry in \($0) s" } ?? ": retry later")
        case .providerError(let code, let text):
            "the provider returned error \(code)" + (text.map { ": \($0)" } ?? "")
        case .accessDenied: "the authorization was denied"
        case .authorizationExpired: "the pending authorization expired: start the sign-in again"
        case .notSignedIn: "not signed in: sign in first"
        case .invalidResponse(let why): "the provider's response is invalid: \(why)"
        case .discoveryFailed(let why): "OpenID discovery failed: \(why)"
        case .unsupported(let why): "unsupported: \(why)"
        case .invalidConfiguration(let why): "invalid configuration: \(why)"
        case .tokenLifetimeTooShort(let lifetime, let minTTL):
            "the provider's access tokens live \(Int(lifetime.secondsValue)) s, less than the \(Int(minTTL.secondsValue)) s asked for: ask for a shorter minimum time to live"
        case .pushedAuthorizationRequired:
            "the provider requires pushed authorization requests (PAR, RFC 9126) and the configuration forbids them:"
                + " allow PAR (automatic or always)"
        case .pushedAuthorizationRefused(let status):
            "the provider refused the pushed authorization request (HTTP \(status), no reason given): check the client id,"
                + " its credentials, the redirect URI and the scopes registered at the provider"
        case .invalidTarget(let resource):
            "the provider refused the resource" + (resource.map { " " + Self.describeResource($0) } ?? "")
                + " (invalid_target): it is not allowed for this client or scope, or the session's refresh token does not"
                + " cover it; sign in again asking for it"
        case .resourceRefreshWouldNarrow(let resource):
            "no token for the resource \(Self.describeResource(resource)) was refreshed: the provider rotates refresh tokens,"
                + " and a rotated one may then serve this resource only; use a provider setting without rotation,"
                + " declare one whose rotated tokens keep their resources (rotatedRefreshTokensKeepResources),"
                + " or sign in with this resource as the session's own"
        case .refreshTokenNarrowed(let resource):
            "the session's refresh token was rotated for the resource \(Self.describeResource(resource)) and may serve"
                + " it only: it is not used for other tokens; sign in again"
        case .insufficientScope(let scopes):
            "the resource still asks for more scopes (" + scopes.prefix(8).map { String($0.prefix(64)) }.joined(separator: " ")
                + ") after the allowed step-up sign-ins: ask the resource's administrator which scopes the account may get"
        case .cancelled: "the operation was cancelled"
        case .storage(let error): "credential storage failed: \(error)"
        }
    }

    /// A resource indicator as errors show it: redacted like every URL (no query, no user info).
    private static func describeResource(_ resource: String) -> String {
        URL(string: resource).map(Redactor.describe) ?? "<url>"
    }
}
