import Logging
import CredentialVault
import Foundation

extension OIDCClient {
    /// Starts a sign-in with the authorization code flow and PKCE S256: creates `state`,
    /// `nonce` and a verifier, stores them as an ephemeral device-only credential keyed by
    /// `state`, and returns the URL to open in the browser.
    /// - Parameters:
    ///   - redirectURI: a redirect URI registered at the provider (loopback or custom scheme).
    ///   - scopes: overrides the configured scopes.
    ///   - additionalParameters: extra authorization parameters (`prompt`, `login_hint`, ...).
    public func beginAuthorization(
        redirectURI: String, scopes: [String]? = nil, additionalParameters: [String: String] = [:]
    ) async throws(AuthError) -> AuthorizationRequest {
        let metadata = try await provider.metadata()
        guard let endpoint = metadata.authorizationEndpoint else {
            throw .unsupported("the provider has no authorization endpoint")
        }
        guard metadata.supportsS256 else { throw .unsupported("the provider does not support PKCE S256") }
        guard URL(string: redirectURI)?.scheme != nil else { throw .invalidConfiguration("the redirect URI is not a URL") }
        let pkce = PKCE.generate()
        let state = SecureRandom.token()
        let nonce = SecureRandom.token()
        let scopes = scopes ?? configuration.scopes
        // With DPoP the session's key is made now: `dpop_jkt` binds the code to it (RFC 9449
        // section 10), so a stolen code is useless without the key.
        let dpop = configuration.dpop ? try DPoPProver.newKey() : nil
        let pending = PendingAuthorization(
            verifier: pkce.verifier, nonce: nonce, redirectURI: redirectURI, issuer: metadata.issuer,
            clientID: configuration.clientID, createdAt: clock.now(), requestsOpenID: scopes.contains("openid"),
            dpopKey: dpop?.pem)
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", configuration.clientID), ("redirect_uri", redirectURI),
            ("scope", scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
            ("code_challenge", pkce.challenge), ("code_challenge_method", PKCE.method),
        ]
        if let dpop { parameters.append(("dpop_jkt", dpop.key.thumbprint)) }
        parameters += try configuration.resourceParameters()  // RFC 8707: repeated, one per resource
        let reserved = Set(parameters.map(\.0))
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) where !reserved.contains(name) {
            parameters.append((name, value))
        }
        // Pushed (PAR) before the pending sign-in is saved: a refused push leaves nothing behind.
        let (url, pushed) = try await authorizationURL(endpoint, parameters, metadata: metadata)
        try await pending.save(under: configuration.pendingKey(state: state), in: store, ttl: configuration.pendingAuthorizationTTL)
        logger.info("sign-in started\(pushed == nil ? "" : " (pushed)"), redirect to \(redirectURI)", metadata: ["category": "signin"])
        return AuthorizationRequest(
            url: url, state: state, redirectURI: redirectURI,
            expiresAt: clock.now().addingTimeInterval(configuration.pendingAuthorizationTTL.secondsValue),
            requestURIExpiresAt: pushed?.expiresAt, openBy: pushed?.openBy)
    }

    /// Completes a sign-in from the redirect URL (loopback or custom scheme): checks `state`
    /// and that the redirect belongs to this client's pending sign-in (issuer, client,
    /// endpoint) before consuming it, checks `iss` (required when the provider advertises
    /// RFC 9207), handles a provider error, exchanges the code with the PKCE verifier,
    /// verifies the ID token and its `nonce`, and stores the session.
    @discardableResult
    public func handleRedirect(url: URL) async throws(AuthError) -> AuthSession {
        let parameters = FormEncoding.parameters(of: url)
        guard let state = parameters["state"], !state.isEmpty else {
            logger.warning("redirect without state refused", metadata: ["category": "signin"])
            throw .stateMismatch
        }
        let key = configuration.pendingKey(state: state)
        guard let pending = try await PendingAuthorization.peek(key, from: store) else {
            logger.warning("redirect with an unknown or already used state refused", metadata: ["category": "signin"])
            throw .stateMismatch
        }
        let metadata = try await provider.metadata()
        guard exactlyEqual(pending.clientID, configuration.clientID), exactlyEqual(pending.issuer, metadata.issuer),
            Self.sameEndpoint(url, pending.redirectURI)
        else {
            // Not consumed: a foreign redirect must not destroy the user's pending sign-in.
            logger.warning("redirect does not belong to this client's pending sign-in", metadata: ["category": "signin"])
            throw .stateMismatch
        }
        guard try await PendingAuthorization.take(key, from: store) != nil else {
            logger.warning("redirect with an already used state refused", metadata: ["category": "signin"])
            throw .stateMismatch
        }
        if let issuer = parameters["iss"] {
            guard exactlyEqual(issuer, metadata.issuer) else { throw .invalidResponse("the redirect comes from another issuer (mix-up)") }
        } else if metadata.authorizationResponseIssParameterSupported == true {
            throw .invalidResponse("the redirect carries no iss although the provider advertises it (RFC 9207)")
        }
        if let error = parameters["error"] {
            logger.warning("the provider returned error \(error.prefix(64))", metadata: ["category": "signin"])
            if error == "access_denied" { throw .accessDenied }
            if error == "invalid_target" { throw .invalidTarget(resource: nil) }
            throw .providerError(
                code: String(error.prefix(64)), description: Redactor.providerText(parameters["error_description"]))
        }
        guard let code = parameters["code"], !code.isEmpty else { throw .invalidResponse("the redirect carries no code") }
        let dpopKey = try pending.dpopKey.map { (pem) throws(AuthError) in try DPoPProver.key(stored: pem) }
        let response = try await provider.token(
            grant: "authorization_code",
            [("code", code), ("redirect_uri", pending.redirectURI), ("code_verifier", pending.verifier)]
                + (try configuration.sessionResourceParameter()), dpopKey: dpopKey)
        let session = try await provider.session(
            from: response, nonce: pending.nonce, requireIDToken: pending.requestsOpenID ?? requestsOpenID, code: code,
            dpopKey: pending.dpopKey)
        try await sessions.establish(session)
        logger.info("signed in as \(session.user?.subject ?? "unknown user")", metadata: ["category": "signin"])
        return session
    }

    /// Signs in through the system browser and a loopback redirect listener on 127.0.0.1
    /// (RFC 8252): binds the listener, opens `browser` at a one-time loopback start URL that
    /// redirects to the authorization URL (nothing reusable on a command line), waits until
    /// `timeout` for the redirect carrying this sign-in's `state` (other requests get an error
    /// page), answers the browser with a small page, and completes the sign-in. With PAR the
    /// start URL works only until the request URI expires: opened later, or not opened by
    /// then, the sign-in ends with `authorizationExpired` instead of sending the browser to a
    /// request the provider no longer knows.
    @discardableResult
    public func signIn(
        browser: any BrowserOpener = SystemBrowserOpener(), redirect: LoopbackRedirect = LoopbackRedirect(),
        timeout: Duration = .seconds(300), scopes: [String]? = nil, additionalParameters: [String: String] = [:]
    ) async throws(AuthError) -> AuthSession {
        let listener = try LoopbackListener(port: redirect.port, path: redirect.path, logger: logger)
        defer { listener.close() }
        let request = try await beginAuthorization(
            redirectURI: listener.redirectURI, scopes: scopes, additionalParameters: additionalParameters)
        let arrival = try await listener.openAndWait(
            authorizationURL: request.url, state: request.state, browser: browser, timeout: timeout, openBy: request.openBy)
        do {
            let session = try await handleRedirect(url: arrival.url)
            arrival.respond(.success)
            return session
        } catch {
            arrival.respond(.failure(error.description))
            throw error
        }
    }

    var requestsOpenID: Bool { configuration.scopes.contains("openid") }

    /// Same scheme, host, port and path (the query differs by design).
    static func sameEndpoint(_ url: URL, _ registered: String) -> Bool {
        guard let registered = URL(string: registered),
            let a = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let b = URLComponents(url: registered, resolvingAgainstBaseURL: false)
        else { return false }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && a.port == b.port && a.path == b.path
    }
}
