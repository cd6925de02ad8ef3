import Foundation

/// When a sign-in pushes its authorization request to the provider first (PAR, RFC 9126)
/// instead of putting it in the browser's URL.
///
/// With PAR every authorization parameter (PKCE challenge, `state`, `nonce`, `redirect_uri`,
/// `scope`, `dpop_jkt`, extra parameters) travels in an authenticated POST, and the browser
/// is sent to the authorization endpoint with only `client_id` and the `request_uri` the
/// provider returned: nothing of the request can be read or altered in the browser.
public enum PushedAuthorization: Sendable, Hashable, CustomStringConvertible {
    /// PAR when the provider requires it (`require_pushed_authorization_requests`), a plain
    /// authorization request otherwise. The default.
    case automatic
    /// PAR always; a provider without a `pushed_authorization_request_endpoint` is refused
    /// (`AuthError.unsupported`) rather than given a plain request.
    case always
    /// Never PAR; a provider that requires it is refused
    /// (`AuthError.pushedAuthorizationRequired`) instead of sending the user to a request the
    /// provider is known to reject.
    case never

    /// The PAR endpoint to push to for a provider described by `metadata`, `nil` for a plain
    /// authorization request.
    func endpoint(in metadata: ProviderMetadata) throws(AuthError) -> URL? {
        let required = metadata.requirePushedAuthorizationRequests == true
        switch self {
        case .never:
            if required { throw .pushedAuthorizationRequired }
            return nil
        case .automatic where !required:
            return nil
        case .automatic, .always:
            guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else {
                throw .unsupported(
                    required
                        ? "the provider requires pushed authorization requests but publishes no pushed_authorization_request_endpoint"
                        : "pushed authorization requests were asked for, but the provider publishes no pushed_authorization_request_endpoint")
            }
            return endpoint
        }
    }

    /// The choice, in words.
    public var description: String {
        switch self {
        case .automatic: "automatic"
        case .always: "always"
        case .never: "never"
        }
    }
}
