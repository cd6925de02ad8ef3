import CredentialVault
import Foundation
import Logging

/// A client of one protected resource (an MCP server) following the MCP authorization
/// profile: from the resource's 401 to its RFC 9728 metadata and authorization server
/// (`ResourceAuthorizationDiscovery`), a client identity in the profile's order
/// (`ClientIdentity`), a sign-in by the authorization code flow with PKCE through an
/// `OIDCClient` whose tokens all name the resource (`OIDCConfiguration.sessionResource`: in
/// the authorization request, the code exchange and every refresh), and a step-up sign-in for
/// the scopes an `insufficient_scope` challenge asks for, at most
/// `ProtectedResourceConfiguration.maximumStepUps` times per request.
///
/// The session lives in `store` under the `OIDCClient`'s key, so another process can use it
/// through an `OIDCClient` with `oidcConfiguration` (the CLI does).
public actor ProtectedResourceClient {
    /// The configuration.
    public nonisolated let configuration: ProtectedResourceConfiguration
    private let store: any AsyncTokenStorageAdapter
    private let transport: any HTTPTransport
    private let clock: any CredentialClock
    private let logger: Logger
    private let discovery: ResourceAuthorizationDiscovery

    /// What discovery found (after `prepare(from:)`).
    public private(set) var authorization: ResourceAuthorization?
    /// The client identity chosen (after `prepare(from:)`).
    public private(set) var identity: ClientIdentity?
    /// The scopes the next sign-in asks for: discovery's, grown by step-ups.
    public private(set) var scopes: [String] = []
    /// The preparation in flight, shared by concurrent callers.
    private var preparing: Task<OIDCClient, any Error>?
    /// The sign-in in flight, shared by concurrent callers.
    private var signingIn: Task<AuthSession, any Error>?
    /// The OpenID Connect client of the resource's authorization server (after `prepare(from:)`).
    public private(set) var oidcClient: OIDCClient?

    /// Creates the client; nothing is sent until `prepare(from:)` or `send(_:browser:timeout:)`.
    /// - Throws: `AuthError.invalidConfiguration` for an invalid configuration.
    public init(
        configuration: ProtectedResourceConfiguration, store: any AsyncTokenStorageAdapter,
        transport: any HTTPTransport = DefaultHTTPTransport.make(), clock: any CredentialClock = SystemClock(),
        logger: Logger = .credentialVaultSilent
    ) throws(AuthError) {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.transport = transport
        self.clock = clock
        self.logger = logger.redacting
        self.discovery = ResourceAuthorizationDiscovery(
            transport: transport, timeout: configuration.requestTimeout, allowsInsecureHTTP: configuration.allowsInsecureHTTP,
            logger: logger)
    }

    /// Discovers the authorization server from the resource's answer to a request without a
    /// token (`nil`: from the RFC 9728 well-known URL), chooses the client identity
    /// (registering one when it comes to that) and makes the `OIDCClient`.
    /// - Throws: `AuthError.discoveryFailed` for metadata naming another resource or a
    ///   plain-http authorization server for an https resource, `.invalidResponse` for a
    ///   malformed challenge or registration answer, `.unsupported` when no identity can be
    ///   had; nothing is stored then.
    @discardableResult
    public func prepare(from response: HTTPResponse?) async throws(AuthError) -> OIDCClient {
        // One preparation at a time: a concurrent caller shares it rather than registering a
        // second client and overwriting the first's state.
        // The task clears its own slot when it ends: a caller that gave up (cancelled) must not
        // let the next caller start a second preparation beside the first.
        let task = preparing ?? Task { () async throws -> OIDCClient in
            defer { self.preparing = nil }
            return try await self.prepareOnce(from: response)
        }
        preparing = task
        return try await Self.result(of: task)
    }

    /// A shared task's result for one caller: its error, or `cancelled` when this caller was.
    private static func result<T: Sendable>(of task: Task<T, any Error>) async throws(AuthError) -> T {
        switch await SharedTaskWait.result(of: task) {
        case .success(let value)?: return value
        case .failure(let error as AuthError)?: throw error
        case .failure?, nil: throw .cancelled
        }
    }

    private func prepareOnce(from response: HTTPResponse?) async throws(AuthError) -> OIDCClient {
        var found: ResourceAuthorization
        if let response {
            found = try await discovery.discover(resource: configuration.resource, response: response)
        } else {
            found = try await discovery.discover(resource: configuration.resource, challenge: nil)
        }
        // The resource's scopes (its challenge's or its metadata's) are held to the step-up's rules.
        found.scopes = try ScopeStepUp.checked(found.scopes)
        let identity = try await ClientIdentityResolver(
            configuration: configuration, store: store, transport: transport, logger: logger
        ).resolve(found)
        let client = try await OIDCClient(
            configuration: Self.oidcConfiguration(configuration, found, identity, scopes: found.scopes), store: store,
            transport: transport, clock: clock, logger: logger)
        authorization = found
        self.identity = identity
        scopes = found.scopes
        oidcClient = client
        return client
    }

    /// The `OIDCClient` configuration for a resource's authorization server and a client
    /// identity: the discovered metadata pinned, the resource as `sessionResource`.
    public static func oidcConfiguration(
        _ configuration: ProtectedResourceConfiguration, _ authorization: ResourceAuthorization, _ identity: ClientIdentity,
        scopes: [String]
    ) -> OIDCConfiguration {
        var oidc = OIDCConfiguration(
            issuer: authorization.issuer, clientID: identity.clientID, clientAuthentication: identity.clientAuthentication,
            scopes: scopes, metadata: authorization.providerMetadata, requestTimeout: configuration.requestTimeout,
            storageService: configuration.storageService, session: configuration.session,
            allowsInsecureHTTP: configuration.allowsInsecureHTTP, dpop: configuration.dpop)
        oidc.sessionResource = authorization.resource
        return oidc
    }

    /// Signs in through the browser and the configured loopback redirect, asking for `scopes`
    /// and the resource (after `prepare(from:)`).
    @discardableResult
    /// Concurrent callers (two first requests, two step-ups) share one sign-in: one browser
    /// window, one loopback listener.
    public func signIn(browser: any BrowserOpener = SystemBrowserOpener(), timeout: Duration = .seconds(300)) async throws(AuthError) -> AuthSession {
        guard let oidcClient else { throw .notSignedIn }
        let (redirect, scopes) = (configuration.redirect, scopes)
        let task = signingIn ?? Task { () async throws -> AuthSession in
            defer { self.signingIn = nil }
            return try await oidcClient.signIn(browser: browser, redirect: redirect, timeout: timeout, scopes: scopes)
        }
        signingIn = task
        return try await Self.result(of: task)
    }

    /// The headers that authorize one request to `url` of the resource (see
    /// `OIDCClient.authorizationHeaders(for:method:resource:)`: Bearer, or DPoP with a proof).
    /// - Throws: `AuthError.invalidConfiguration` for a URL off the resource's origin.
    public func authorizationHeaders(for url: URL, method: String) async throws(AuthError) -> [String: String] {
        try checkOnResource(url)
        guard let oidcClient else { throw .notSignedIn }
        return try await oidcClient.authorizationHeaders(for: url, method: method)
    }

    /// The session's token is the resource's (its audience): it goes to the resource's origin
    /// only, never to another server a caller (or a hostile document) names.
    private func checkOnResource(_ url: URL) throws(AuthError) {
        guard ResourceURI.sameOrigin(url, configuration.resource) else {
            throw .invalidConfiguration("\(Redactor.describe(url)) is not on the protected resource's origin: its token is not sent there")
        }
    }

    /// Sends `request` to the resource with the session's token: first without one when
    /// nothing is prepared yet (a 401 then leads to discovery and, unless the store holds a
    /// usable session of the chosen client, a sign-in), and again after a
    /// step-up sign-in when the resource answers `insufficient_scope`, at most
    /// `maximumStepUps` times. Any other answer is returned as it is.
    /// - Throws: `AuthError.insufficientScope` when the resource still asks for scopes after
    ///   the last allowed step-up; `.invalidConfiguration` for a request off the resource's
    ///   origin (nothing is sent); what discovery, registration and sign-in throw.
    public func send(
        _ request: HTTPRequest, browser: any BrowserOpener = SystemBrowserOpener(), timeout: Duration = .seconds(300)
    ) async throws(AuthError) -> HTTPResponse {
        try checkOnResource(request.url)
        let client: OIDCClient
        if let oidcClient {
            client = oidcClient
        } else {
            guard EndpointPolicy(issuer: request.url, allowsInsecureHTTP: configuration.allowsInsecureHTTP).allows(request.url) else {
                throw .invalidConfiguration("the resource \(Redactor.describe(request.url)) is not https (plain http only on this machine)")
            }
            let probe = try await transport.send(request)
            guard probe.status == 401 else { return probe }
            client = try await prepare(from: probe)
            // A session kept in the store (an earlier process signed in) is used as it is.
            if !client.hasUsableSession { try await signIn(browser: browser, timeout: timeout) }
        }
        var stepUps = 0
        var signedIn = false
        while true {
            let response: HTTPResponse
            do {
                response = try await client.send(authorized: request)
            } catch .notSignedIn where !signedIn {
                signedIn = true
                try await signIn(browser: browser, timeout: timeout)
                continue
            }
            guard let asked = try ScopeStepUp.requestedScopes(in: response) else { return response }
            guard stepUps < configuration.maximumStepUps else {
                logger.warning("the resource still answers insufficient_scope after \(stepUps) step-ups", metadata: ["category": "resource"])
                throw .insufficientScope(scopes: asked)
            }
            stepUps += 1
            scopes = try ScopeStepUp.union(scopes, asked)
            logger.info("step-up sign-in for scopes \(scopes.joined(separator: " "))", metadata: ["category": "resource"])
            try await signIn(browser: browser, timeout: timeout)
            signedIn = true
        }
    }
}
