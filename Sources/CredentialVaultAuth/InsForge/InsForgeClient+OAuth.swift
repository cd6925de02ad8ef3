import Logging
import CredentialVault
import Foundation

extension InsForgeClient {
    /// Starts an OAuth sign-in: creates a PKCE verifier and a `state`, asks the backend for
    /// the provider's authorization URL (`/oauth/{provider}` with the S256 challenge), and
    /// stores the verifier as an ephemeral device-only credential keyed by `state`.
    ///
    /// The `state` rides in the redirect URI's query (the backend keeps it when it appends
    /// `insforge_code`), so the redirect finds its pending sign-in, even in a new process.
    /// - Parameter redirectTo: where the backend sends the browser at the end (a loopback
    ///   address or the app's custom scheme); it must not carry a `state` of its own.
    public func beginOAuth(provider: InsForgeOAuthProvider, redirectTo: String) async throws(InsForgeError) -> AuthorizationRequest {
        guard let target = URL(string: redirectTo), target.scheme != nil, target.fragment == nil else {
            throw .invalidInput("the redirect URI is not a URL without fragment")
        }
        guard FormEncoding.parameters(of: target)["state"] == nil else {
            throw .invalidInput("the redirect URI must not carry a state parameter")
        }
        let pkce = PKCE.generate()
        let state = SecureRandom.token()
        guard let redirectURI = FormEncoding.url(target, adding: [("state", state)])?.absoluteString else {
            throw .invalidInput("cannot add the state to the redirect URI")
        }
        struct Answer: Decodable { var authUrl: String }
        let answer = try await api.call(
            Answer.self, "GET", "/oauth/\(provider.rawValue)",
            query: [("redirect_uri", redirectURI), ("code_challenge", pkce.challenge)])
        guard let url = URL(string: answer.authUrl), configuration.endpointPolicy.allows(url) else {
            throw .auth(.invalidResponse("the backend's authUrl is not an https URL"))
        }
        // The OIDC client's pending sign-in record: InsForge has no nonce, the "client" is the provider.
        let pending = PendingAuthorization(
            verifier: pkce.verifier, nonce: "", redirectURI: redirectURI, issuer: configuration.backendIdentifier,
            clientID: Self.pendingClient(provider), createdAt: clock.now())
        do {
            try await pending.save(under: configuration.pendingKey(state: state), in: store, ttl: configuration.pendingOAuthTTL)
        } catch {
            throw InsForgeError(error)
        }
        logger.info("OAuth sign-in with \(provider) started, redirect to \(Redactor.describe(target))", metadata: ["category": "insforge"])
        return AuthorizationRequest(
            url: url, state: state, redirectURI: redirectURI,
            expiresAt: clock.now().addingTimeInterval(configuration.pendingOAuthTTL.secondsValue))
    }

    /// Completes an OAuth sign-in from the redirect URL (loopback or custom scheme): finds and
    /// consumes the pending sign-in by `state`, exchanges `insforge_code` with its PKCE
    /// verifier (`/oauth/exchange`) and stores the session.
    /// - Throws: `.auth(.stateMismatch)` for a missing, unknown, used or foreign `state`;
    ///   `.auth(.authorizationExpired)` past the pending sign-in's lifetime;
    ///   `.auth(.accessDenied)` / `.auth(.providerError)` when the redirect reports an error;
    ///   `invalidCode` when the backend refuses the code or the verifier.
    @discardableResult
    public func handleRedirect(url: URL) async throws(InsForgeError) -> InsForgeAuthResponse {
        let parameters = FormEncoding.parameters(of: url)
        guard let state = parameters["state"], !state.isEmpty else {
            logger.warning("OAuth redirect without state refused", metadata: ["category": "insforge"])
            throw .auth(.stateMismatch)
        }
        let key = configuration.pendingKey(state: state)
        let found: PendingAuthorization?
        do { found = try await PendingAuthorization.peek(key, from: store) } catch { throw InsForgeError(error) }
        // Checked before it is consumed: a foreign redirect must not destroy the pending sign-in.
        guard let pending = found, exactlyEqual(pending.issuer, configuration.backendIdentifier),
            InsForgeOAuthProvider.allCases.map(Self.pendingClient).contains(where: { exactlyEqual($0, pending.clientID) }),
            OIDCClient.sameEndpoint(url, pending.redirectURI)
        else {
            logger.warning("OAuth redirect with an unknown, used or foreign state refused", metadata: ["category": "insforge"])
            throw .auth(.stateMismatch)
        }
        let taken: PendingAuthorization?
        do { taken = try await PendingAuthorization.take(key, from: store) } catch { throw InsForgeError(error) }
        guard taken != nil else {
            logger.warning("OAuth redirect with an already used state refused", metadata: ["category": "insforge"])
            throw .auth(.stateMismatch)
        }
        if let error = parameters["error"] {
            logger.warning("the OAuth sign-in failed at the provider or backend", metadata: ["category": "insforge"])
            if error == "access_denied" { throw .auth(.accessDenied) }
            throw .auth(.providerError(code: "oauth_failed", description: Redactor.providerText(error)))
        }
        guard let code = parameters["insforge_code"], !code.isEmpty else {
            throw .auth(.invalidResponse("the redirect carries no insforge_code"))
        }
        let body = try InsForgeAPI.json(["code": code, "code_verifier": pending.verifier])
        let response = try await api.call(
            InsForgeAuthResponse.self, "POST", "/oauth/exchange", query: api.clientType, body: body, purpose: .secret)
        try await establish(response)
        return response
    }

    /// Signs in with an OAuth provider through the system browser.
    ///
    /// Without `redirectTo`, a loopback listener on 127.0.0.1 receives the redirect (RFC 8252):
    /// the browser is opened, the redirect awaited until `timeout`, answered with a small page,
    /// and the session stored; the answer is returned. With `redirectTo` (the app's custom
    /// scheme), the browser is opened and `nil` returned: hand the redirect to
    /// `handleRedirect(url:)` when the app receives it.
    @discardableResult
    public func signInWithOAuth(
        provider: InsForgeOAuthProvider, redirectTo: String? = nil, browser: any BrowserOpener = SystemBrowserOpener(),
        loopback: LoopbackRedirect = LoopbackRedirect(), timeout: Duration = .seconds(300)
    ) async throws(InsForgeError) -> InsForgeAuthResponse? {
        if let redirectTo {
            let request = try await beginOAuth(provider: provider, redirectTo: redirectTo)
            do { try await browser.open(request.url) } catch { throw InsForgeError(error) }
            return nil
        }
        let listener: LoopbackListener
        do { listener = try LoopbackListener(port: loopback.port, path: loopback.path, logger: logger) } catch {
            throw InsForgeError(error)
        }
        defer { listener.close() }
        let request = try await beginOAuth(provider: provider, redirectTo: listener.redirectURI)
        let arrival: LoopbackArrival
        do {
            arrival = try await listener.openAndWait(
                authorizationURL: request.url, state: request.state, browser: browser, timeout: timeout)
        } catch {
            throw InsForgeError(error)
        }
        do {
            let response = try await handleRedirect(url: arrival.url)
            arrival.respond(success: true)
            return response
        } catch {
            arrival.respond(success: false, message: error.description)
            throw error
        }
    }

    /// What a pending OAuth sign-in records as its client (the provider).
    static func pendingClient(_ provider: InsForgeOAuthProvider) -> String { "insforge:\(provider.rawValue)" }
}
