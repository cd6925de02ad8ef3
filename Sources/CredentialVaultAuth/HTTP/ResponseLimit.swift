/// The largest response body accepted from each kind of endpoint, enforced by the transport
/// while receiving (`HTTPRequest.maximumResponseSize`): a hostile provider cannot make the
/// client buffer more than this.
enum ResponseLimit {
    /// A discovery document (256 KiB).
    static let discovery = 256 * 1024
    /// A JWK Set (`JSONWebKeySet.maximumSize`, 256 KiB).
    static let jwks = JSONWebKeySet.maximumSize
    /// A token, device authorization or revocation answer (64 KiB: tokens and an ID token).
    static let token = 64 * 1024
    /// A pushed authorization request's answer (16 KiB: a `request_uri` and its lifetime).
    static let pushedAuthorization = 16 * 1024
    /// A UserInfo answer (256 KiB), for applications that fetch it through the transport.
    static let userinfo = 256 * 1024
    /// An InsForge auth API answer (1 MiB: a user with its profile).
    static let insForge = HTTPRequest.defaultMaximumResponseSize

    /// The error for a body beyond `limit`.
    static func exceeded(_ limit: Int) -> AuthError {
        .invalidResponse("the response is larger than \(limit / 1024) KiB")
    }
}
