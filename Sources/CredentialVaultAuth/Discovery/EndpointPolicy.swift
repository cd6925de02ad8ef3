import Foundation

/// Which endpoint URLs the client talks to for an issuer: https always; plain http only when
/// the issuer itself is http (allowed by `OIDCConfiguration.validate()` only on this machine
/// or with `allowsInsecureHTTP`), and then only to this machine unless `allowsInsecureHTTP`.
/// An https issuer never gets an http endpoint: the code, the PKCE verifier, the client
/// secret, tokens and the signing keys would cross the network in clear.
struct EndpointPolicy: Sendable {
    /// The issuer (or InsForge backend) the endpoints belong to.
    let issuer: URL
    /// The configuration's opt-in to plain http off this machine.
    let allowsInsecureHTTP: Bool

    /// 127.0.0.1, ::1 and localhost.
    static func isLoopback(_ host: String?) -> Bool {
        ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host?.lowercased() ?? "")
    }

    /// Whether the client may send requests (or the browser) to `url`.
    func allows(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return false }
        if scheme == "https" { return true }
        guard scheme == "http", issuer.scheme?.lowercased() == "http" else { return false }
        return allowsInsecureHTTP || Self.isLoopback(host)
    }

    /// The first endpoint of `metadata` that is refused, with its metadata name; `nil` when all pass.
    func firstRefused(_ metadata: ProviderMetadata) -> (name: String, url: URL)? {
        let endpoints: [(String, URL?)] = [
            ("authorization_endpoint", metadata.authorizationEndpoint), ("token_endpoint", metadata.tokenEndpoint),
            ("jwks_uri", metadata.jwksURI), ("userinfo_endpoint", metadata.userinfoEndpoint),
            ("revocation_endpoint", metadata.revocationEndpoint), ("end_session_endpoint", metadata.endSessionEndpoint),
            ("device_authorization_endpoint", metadata.deviceAuthorizationEndpoint),
            ("pushed_authorization_request_endpoint", metadata.pushedAuthorizationRequestEndpoint),
        ]
        for case let (name, url?) in endpoints where !allows(url) { return (name, url) }
        return nil
    }

    /// Why `refused` is refused, for an error message.
    static func reason(_ refused: (name: String, url: URL)) -> String {
        "the \(refused.name) \(Redactor.describe(refused.url)) is not an https URL (plain http only for a loopback http issuer)"
    }
}
