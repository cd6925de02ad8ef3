import Logging
import CredentialVault
import Foundation

/// The provider-facing machinery shared by the flows, the refresher and the client-credentials
/// client: metadata, HTTP, ID token verification, token and revocation requests.
struct OIDCProvider: Sendable {
    let configuration: OIDCConfiguration
    let http: OAuthEndpointClient
    let clock: any CredentialClock
    let logger: Logger
    let metadataCache: MetadataCache
    let keySets: KeySetCache
    /// The last DPoP nonce per origin, persisted beside the session when there is a store.
    let dpopNonces: DPoPNonceCache

    init(
        configuration: OIDCConfiguration, transport: any HTTPTransport, clock: any CredentialClock, logger: Logger,
        store: (any AsyncTokenStorageAdapter)? = nil
    ) {
        self.configuration = configuration
        self.dpopNonces = DPoPNonceCache(
            store: store, key: configuration.dpopNonceKey, options: StorageOptions(accessibility: configuration.sessionAccessibility))
        self.clock = clock
        self.logger = logger.redacting
        self.keySets = KeySetCache(clock: clock)
        // `self.logger`, not the parameter: the HTTP layer logs provider answers (error codes,
        // discovery, keys), which pass through the redaction like every other record.
        self.http = OAuthEndpointClient(
            transport: transport, timeout: configuration.requestTimeout, logger: self.logger,
            bareBadRequestIsInvalidGrant: configuration.bareBadRequestIsInvalidGrant)
        self.metadataCache = MetadataCache(issuer: configuration.issuer, preset: configuration.metadata, policy: configuration.endpointPolicy)
    }

    func metadata() async throws(AuthError) -> ProviderMetadata { try await metadataCache.get(using: http) }

    /// A token request with this client's authentication, with DPoP proofs by `dpopKey` when given.
    func token(grant: String, _ parameters: [(String, String)], dpopKey: JWSSigningKey? = nil) async throws(AuthError) -> TokenResponse {
        let metadata = try await metadata()
        let clock = clock
        return try await http.token(
            metadata, grant: grant, parameters: parameters, clientID: configuration.clientID,
            authentication: configuration.clientAuthentication, now: { clock.now() }, dpop: dpopKey.map(prover))
    }

    /// Proofs by `key`, with this client's nonces.
    func prover(_ key: JWSSigningKey) -> DPoPProver { DPoPProver(key: key, nonces: dpopNonces, clock: clock) }

    /// The prover of a DPoP-bound session; `nil` for a Bearer session.
    func prover(for session: AuthSession) throws(AuthError) -> DPoPProver? {
        guard let pem = session.dpopKey else { return nil }
        return prover(try DPoPProver.key(stored: pem))
    }

    /// Verifies an ID token's signature and claims; refetches the JWKS once on an unknown
    /// `kid`, unless another unknown `kid` caused a refetch within the cooldown.
    func verifyIDToken(_ idToken: String, nonce: String?) async throws(AuthError) -> VerifiedIDToken {
        let metadata = try await metadata()
        guard let jwksURI = metadata.jwksURI else { throw .unsupported("the provider publishes no jwks_uri") }
        let validator = IDTokenValidator(
            issuer: metadata.issuer, clientID: configuration.clientID, allowedAlgorithms: try Self.allowedAlgorithms(metadata),
            clockSkew: configuration.clockSkew, clock: clock)
        let keySet = try await keySets.current(from: jwksURI, using: http)
        do {
            return try validator.validate(idToken, keySet: keySet, nonce: nonce)
        } catch .unknownKeyID {
            guard let fresh = try await keySets.refetchForUnknownKey(from: jwksURI, using: http) else {
                logger.warning("the ID token is signed with an unknown key (the keys were refetched moments ago)", metadata: ["category": "idtoken"])
                throw Self.map(.unknownKeyID)
            }
            logger.warning("the ID token is signed with an unknown key: refetched the provider's keys once", metadata: ["category": "idtoken"])
            do { return try validator.validate(idToken, keySet: fresh, nonce: nonce) } catch { throw Self.map(error) }
        } catch {
            throw Self.map(error)
        }
    }

    /// The provider's published ID token algorithms that this client verifies (all it
    /// verifies when the provider publishes none); `unsupported` when it publishes only others.
    static func allowedAlgorithms(_ metadata: ProviderMetadata) throws(AuthError) -> Set<JWSAlgorithm> {
        guard let names = metadata.idTokenSigningAlgValuesSupported else { return Set(JWSAlgorithm.allCases) }
        let allowed = Set(names.compactMap { JWSAlgorithm(name: $0) })
        guard !allowed.isEmpty else {
            throw .unsupported("the provider signs ID tokens only with algorithms this client does not verify (it verifies RS256, ES256 and EdDSA)")
        }
        return allowed
    }

    static func map(_ error: IDTokenError) -> AuthError {
        if case .nonceMismatch = error { return .nonceMismatch }
        return .invalidIDToken(error.reason)
    }

    /// Builds a session from a token response (keeping `dpopKey`, or the previous session's; verifying its ID token when there is one, with
    /// its `at_hash` against the access token and its `c_hash` against `code` when a code was exchanged).
    func session(
        from response: TokenResponse, nonce: String?, requireIDToken: Bool, previous: AuthSession? = nil, code: String? = nil,
        dpopKey: String? = nil
    ) async throws(AuthError) -> AuthSession {
        let now = clock.now()
        var user = previous?.user
        if let idToken = response.idToken {
            let verified = try await verifyIDToken(idToken, nonce: nonce)
            guard TokenHash.verify("at_hash", of: verified, against: response.accessToken) else {
                throw .invalidIDToken("at_hash does not match the access token")
            }
            // c_hash binds the ID token to the code it was exchanged for; on a refresh or the
            // device flow no code was exchanged, and a c_hash there (e.g. carried over from
            // the sign-in's ID token) has nothing to be checked against.
            if let code, !TokenHash.verify("c_hash", of: verified, against: code) {
                throw .invalidIDToken("c_hash does not match the authorization code")
            }
            if let previousSubject = previous?.user?.subject, !exactlyEqual(previousSubject, verified.subject) {
                throw .invalidIDToken("the refreshed ID token names another subject")
            }
            user = AuthUser(verified)
        } else if requireIDToken {
            throw .invalidResponse("the provider returned no ID token for an openid request")
        }
        var session = AuthSession(
            accessToken: response.accessToken,
            refreshToken: response.refreshToken ?? previous?.refreshToken,
            idToken: response.idToken ?? previous?.idToken,
            expiresAt: response.expiresIn.map { now.addingTimeInterval($0) },
            scope: response.scope ?? previous?.scope, user: user, obtainedAt: now)
        // The token endpoint checked the token type against the proof: a DPoP answer to a
        // proof by this key (new, or the previous session's) binds the new tokens to it.
        session.dpopKey = dpopKey ?? previous?.dpopKey
        // A refresh of the main token keeps the resources' tokens: they stay valid until they expire.
        session.resourceTokenSet = previous?.resourceTokenSet
        return session
    }

    /// RFC 7009 revocation of one token. Authenticates as the client; when the provider
    /// refuses that (401/403) and an access token is at hand, retries with it as a Bearer
    /// credential (glewlwyd's requirement), or as a DPoP one with a proof by `dpop`.
    func revoke(_ token: String, hint: String, bearer: String?, dpop: DPoPProver? = nil) async throws(AuthError) {
        let metadata = try await metadata()
        guard let endpoint = metadata.revocationEndpoint else { throw .unsupported("the provider has no revocation endpoint") }
        var form = [("token", token), ("token_type_hint", hint)]
        var headers: [String: String] = [:]
        try configuration.clientAuthentication.apply(
            clientID: configuration.clientID, endpoint: endpoint, metadata: metadata, now: clock.now(), form: &form, headers: &headers)
        var response = try await http.postForm(endpoint, form, headers: headers)
        // Not for an assertion: the provider refused it on its merits, and sending it again
        // would be a replay (the bearer fallback is for clients with no credential of their own).
        if (response.status == 401 || response.status == 403), let bearer, headers["Authorization"] == nil,
            !configuration.clientAuthentication.usesAssertion
        {
            if let dpop {
                response = try await revokeWithDPoP(endpoint, form: form, accessToken: bearer, dpop: dpop, metadata: metadata)
            } else {
                response = try await http.postForm(endpoint, form, headers: ["Authorization": "Bearer \(bearer)"])
            }
        }
        guard response.status == 200 else {
            throw OAuthEndpointClient.failure(response, grant: nil, confidential: configuration.clientAuthentication.isConfidential, bare400IsInvalidGrant: false)
        }
    }

    /// Revocation authorized by a DPoP-bound access token. glewlwyd 2.7.5 checks the proof's
    /// `htu` against `<issuer>revoke` (its code forgets the slash): when the provider refuses a
    /// correct proof with `invalid_dpop_proof` and its revocation endpoint is exactly
    /// `<issuer>/revoke`, one more proof naming that URL is sent. A provider that follows the
    /// RFC accepts the first proof and never sees the second.
    private func revokeWithDPoP(
        _ endpoint: URL, form: [(String, String)], accessToken: String, dpop: DPoPProver, metadata: ProviderMetadata
    ) async throws(AuthError) -> HTTPResponse {
        let send = { (target: URL?) async throws(AuthError) -> HTTPResponse in
            try await dpop.exchange(method: "POST", url: endpoint, target: target, accessToken: accessToken) { (proof) async throws(AuthError) in
                try await self.http.postForm(endpoint, form, headers: ["Authorization": "DPoP \(accessToken)", "DPoP": proof])
            }
        }
        let response = try await send(nil)
        let slashless = URL(string: metadata.issuer + "revoke")
        guard response.status == 401, OAuthErrorBody.parse(response.body)?.error == "invalid_dpop_proof",
            endpoint.absoluteString == metadata.issuer + "/revoke", let slashless
        else { return response }
        logger.debug("revocation refused the proof; retrying with glewlwyd's htu", metadata: ["category": "dpop"])
        return try await send(slashless)
    }
}

extension AuthUser {
    /// The user described by a verified ID token.
    init(_ token: VerifiedIDToken) {
        var attributes: [String: String] = [:]
        if let username = token.preferredUsername { attributes["preferred_username"] = username }
        self.init(subject: token.subject, name: token.name, email: token.email, attributes: attributes)
    }
}
