import CredentialVault
import Foundation

/// How an `OIDCClient` talks to its provider and keeps its session.
public struct OIDCConfiguration: Sendable {
    /// The issuer identifier (discovery runs against `<issuer>/.well-known/openid-configuration`).
    public var issuer: URL
    /// This client's id at the provider.
    public var clientID: String
    /// `.none` for a public client (desktop, CLI); a secret or a private key (`privateKeyJWT`)
    /// for a confidential one.
    public var clientAuthentication: ClientAuthentication
    /// Scopes requested at sign-in (default `openid`; add e.g. `offline_access` where the provider needs it).
    public var scopes: [String]
    /// Provider metadata to use instead of discovery (for providers without it, or to pin endpoints).
    public var metadata: ProviderMetadata?
    /// Tolerated clock difference for ID token times (default 60 s, at most 10 minutes).
    public var clockSkew: Duration
    /// The deadline of every single HTTP exchange (default 30 s).
    public var requestTimeout: Duration
    /// How long a started sign-in (PKCE verifier, state, nonce) stays valid (default 10 minutes).
    public var pendingAuthorizationTTL: Duration
    /// The credential service under which sessions and pending sign-ins are stored.
    public var storageService: String
    /// Where the session may be read (default `.deviceOnly`).
    public var sessionAccessibility: Accessibility
    /// The session manager's tuning (refresh margin, retries, background refresh).
    public var session: SessionManager.Configuration
    /// Treat a bare HTTP 400 (no OAuth error body) to a refresh request as `invalid_grant`
    /// (default `true`: RFC 6749 §5.2 answers every token error with 400, and glewlwyd sends
    /// rejected refresh tokens that way). Set `false` to keep the session on such answers.
    public var bareBadRequestIsInvalidGrant: Bool
    /// Accept a plain-http issuer that is not on this machine (default `false`: tokens would
    /// cross the network in clear; http is accepted only for 127.0.0.1, ::1 and localhost).
    public var allowsInsecureHTTP: Bool
    /// Bind the session's tokens to a per-session P-256 key with DPoP (RFC 9449; default
    /// `false`). When `true`, sign-in sends `dpop_jkt` and proofs, and a provider that answers
    /// with a Bearer token instead is refused (`AuthError.invalidResponse`): asking for
    /// sender-constrained tokens and silently getting bearer ones would defeat the purpose.
    public var dpop: Bool
    /// When sign-in pushes its authorization request first (PAR, RFC 9126; default
    /// `.automatic`: when the provider requires it).
    public var pushedAuthorization: PushedAuthorization
    /// Resources (RFC 8707) asked for at sign-in: each is sent as a `resource` parameter of the
    /// authorization request and of the device authorization request, so that the session's
    /// refresh token covers them; `SessionManager.accessToken(for:minTTL:)` then obtains a
    /// token per resource. Absolute http(s) URIs without fragment, at most
    /// `ResourceTokenSet.maximumCount` (32); sent in their canonical form
    /// (`ResourceURI.indicator(_:)`). Default: none (the session's tokens name no resource).
    public var resources: [URL] = []
    /// Whether this provider's rotated refresh tokens keep every resource of the grant (RFC
    /// 6749 section 6), so that one rotating session may refresh a token per resource (default
    /// `false`: a rotating refresh token is never spent on a resource, see
    /// `AuthError.resourceRefreshWouldNarrow`). Set it only for a provider known to behave so:
    /// glewlwyd 2.7.5 does not (it narrows the rotated token to the resource), and there the
    /// main access token would become a resource's and be sent to any URL.
    public var rotatedRefreshTokensKeepResources: Bool = false
    /// The one resource the session's main access token is for (RFC 8707, the MCP
    /// authorization profile; default `nil`). When set, its canonical indicator is sent as
    /// `resource` in the authorization request, the code exchange and every refresh of the
    /// main token, so that each access token the session holds names it as audience. Unlike
    /// `resources` (asked for at sign-in only; the main token stays the provider's own), this
    /// makes the main token the resource's token.
    public var sessionResource: URL?

    /// Creates a configuration with the defaults above.
    public init(
        issuer: URL, clientID: String, clientAuthentication: ClientAuthentication = .none,
        scopes: [String] = ["openid"], metadata: ProviderMetadata? = nil,
        clockSkew: Duration = .seconds(60), requestTimeout: Duration = .seconds(30),
        pendingAuthorizationTTL: Duration = .seconds(600), storageService: String = "credential-vault.auth",
        sessionAccessibility: Accessibility = .deviceOnly, session: SessionManager.Configuration = .init(),
        bareBadRequestIsInvalidGrant: Bool = true, allowsInsecureHTTP: Bool = false, dpop: Bool = false,
        pushedAuthorization: PushedAuthorization = .automatic
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientAuthentication = clientAuthentication
        self.scopes = scopes
        self.metadata = metadata
        self.clockSkew = clockSkew
        self.requestTimeout = requestTimeout
        self.pendingAuthorizationTTL = pendingAuthorizationTTL
        self.storageService = storageService
        self.sessionAccessibility = sessionAccessibility
        self.session = session
        self.bareBadRequestIsInvalidGrant = bareBadRequestIsInvalidGrant
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.dpop = dpop
        self.pushedAuthorization = pushedAuthorization
    }

    /// Where the session of this issuer and client is stored.
    public var sessionKey: CredentialKey {
        // A session for one resource (`sessionResource`) is kept apart from the client's other
        // sessions at the same issuer: its token must never be sent to another resource.
        let resource = sessionResource.flatMap { try? ResourceURI.indicator($0) }.map { " for \($0)" } ?? ""
        return CredentialKey(
            service: storageService, account: "session \(clientID)@\(issuer.absoluteString)\(resource)",
            label: "OpenID Connect session of \(clientID) at \(issuer.absoluteString)\(resource)")
    }

    /// Where the last DPoP nonces of this issuer and client are kept, beside the session.
    var dpopNonceKey: CredentialKey {
        CredentialKey(
            service: storageService, account: "dpop nonces \(clientID)@\(issuer.absoluteString)",
            label: "DPoP nonces of \(clientID) at \(issuer.absoluteString)")
    }

    /// Where the pending sign-in with this `state` is stored (ephemeral, device-only).
    func pendingKey(state: String) -> CredentialKey {
        CredentialKey(service: storageService + ".pending", account: state)
    }

    /// The endpoints this issuer may use (https, or loopback http for a loopback http issuer).
    var endpointPolicy: EndpointPolicy { EndpointPolicy(issuer: issuer, allowsInsecureHTTP: allowsInsecureHTTP) }

    func validate() throws(AuthError) {
        guard let scheme = issuer.scheme?.lowercased(), scheme == "https" || scheme == "http", issuer.host != nil else {
            throw .invalidConfiguration("the issuer must be an http(s) URL")
        }
        if scheme == "http" && !EndpointPolicy.isLoopback(issuer.host) && !allowsInsecureHTTP {
            throw .invalidConfiguration("the issuer must use https (plain http is accepted only on this machine)")
        }
        if let metadata, let refused = endpointPolicy.firstRefused(metadata) {
            throw .invalidConfiguration(EndpointPolicy.reason(refused))
        }
        guard !clientID.isEmpty else { throw .invalidConfiguration("the client id is empty") }
        try clientAuthentication.validate()
        guard !storageService.isEmpty else { throw .invalidConfiguration("the storage service is empty") }
        _ = try resourceParameters()
    }

    /// The configured resources as `resource` parameters (canonical, without repeats), checked.
    func resourceParameters() throws(AuthError) -> [(String, String)] {
        guard resources.count <= ResourceTokenSet.maximumCount else {
            throw .invalidConfiguration("more than \(ResourceTokenSet.maximumCount) resources")
        }
        var seen = Set<String>()
        var parameters: [(String, String)] = []
        for resource in (sessionResource.map { [$0] } ?? []) + resources {
            let indicator = try ResourceURI.indicator(resource)
            if seen.insert(indicator).inserted { parameters.append(("resource", indicator)) }
        }
        return parameters
    }

    /// The `resource` parameter of the token requests for the main access token (code
    /// exchange, device code, refresh): `sessionResource`'s indicator, or none.
    func sessionResourceParameter() throws(AuthError) -> [(String, String)] {
        guard let sessionResource else { return [] }
        return [("resource", try ResourceURI.indicator(sessionResource))]
    }
}
