import Logging
import CredentialVault
import Foundation

/// The client credentials grant for services: gets an access token with the client's own
/// credentials and caches it in the vault until it is due for replacement (the session
/// manager's rule: within `min(refreshMargin, lifetime / 2)` of expiry, and at most one new
/// token per `minimumRefreshInterval` unless forced).
/// Concurrent callers share one token request (and, with an `ExclusiveAccessStore`, so do
/// processes sharing the vault). The cache is reached through the store's asynchronous API: no
/// call blocks its caller's thread.
public actor ClientCredentialsClient {
    private let provider: OIDCProvider
    private let storage: SessionStorage
    private let scopes: [String]
    private let schedule: RefreshSchedule
    private let retry: RetryPolicy
    /// The token request in flight, per resource indicator ("" for none).
    private var inFlight: [String: Task<AuthSession, any Error>] = [:]
    /// When the last successful token request started, per resource indicator ("" for none;
    /// the floor of the due rule).
    private var lastFetch: [String: Date] = [:]
    /// The caches of tokens for resources (RFC 8707), each under a key of its own; at most
    /// `ResourceTokenSet.maximumCount` are kept (more are made anew for each call).
    private var resourceStorages: [String: SessionStorage] = [:]

    /// Creates the client.
    /// - Parameters:
    ///   - configuration: issuer, client id and a confidential `clientAuthentication`
    ///     (`scopes` there are ignored; pass them here).
    ///   - scopes: the scopes to request (none: the provider's default).
    ///   - store: where the token is cached (persistent, with `storageOptions`).
    ///   - refreshMargin: a cached token expiring within this margin is replaced (default 60 s;
    ///     for a token living less than twice the margin, half of its lifetime).
    ///   - minimumRefreshInterval: no new token is requested (unless forced) sooner than this
    ///     after the previous one (default 2 s), even when the provider issues tokens that
    ///     have expired already: the cached one is returned meanwhile.
    ///   - logger: where it logs (a swift-log `Logger`; default: none, silent). Every message and metadata
    ///     value passes through `Redactor` first, at every level.
    ///   - storageOptions: how the token is stored (default device-only; `.portable` for a store
    ///     shared by hosts, such as the fleet store, which refuses device-only).
    public init(
        configuration: OIDCConfiguration, scopes: [String] = [], store: any AsyncTokenStorageAdapter,
        refreshMargin: Duration = .seconds(60), minimumRefreshInterval: Duration = .seconds(2), retryPolicy: RetryPolicy = .default,
        transport: any HTTPTransport = DefaultHTTPTransport.make(), clock: any CredentialClock = SystemClock(),
        logger: Logger = .credentialVaultSilent, storageOptions: StorageOptions = .default
    ) throws(AuthError) {
        try configuration.validate()
        guard configuration.clientAuthentication.isConfidential else {
            throw .invalidConfiguration("the client credentials grant needs a confidential client (a secret or a private key)")
        }
        self.provider = OIDCProvider(configuration: configuration, transport: transport, clock: clock, logger: logger)
        self.scopes = scopes
        self.schedule = RefreshSchedule(margin: refreshMargin, floor: max(minimumRefreshInterval, .milliseconds(10)))
        self.retry = retryPolicy
        let scopeText = scopes.sorted().joined(separator: " ")
        self.storage = SessionStorage(
            store: store,
            key: CredentialKey(
                service: configuration.storageService,
                // DPoP-bound and Bearer tokens apart: clients of both kinds sharing a vault would
                // otherwise replace each other's token at every call.
                account: "client-credentials \(configuration.clientID)@\(configuration.issuer.absoluteString) [\(scopeText)]"
                    + (configuration.dpop ? " dpop" : ""),
                label: "client credentials token of \(configuration.clientID)"),
            options: storageOptions)
    }

    /// A valid access token: the cached one unless it is due (or `forceRefresh`), else a new
    /// one from the token endpoint, cached before it is returned. With `configuration.dpop`
    /// it is DPoP-bound (RFC 9449) to a key cached with it: send it with
    /// `authorizationHeaders(for:method:resource:)` or `send(authorized:resource:)`.
    /// - Parameter resource: the resource (RFC 8707) the token is for, sent as `resource`;
    ///   its token is cached apart from the others. `invalidTarget` when the provider refuses it.
    public func accessToken(forceRefresh: Bool = false, resource: URL? = nil) async throws(AuthError) -> String {
        try await cachedToken(forceRefresh: forceRefresh, resource: resource).accessToken
    }

    /// The headers that authorize one request to `url` with the service token (for
    /// `resource`, if given): `Authorization: Bearer ...`, or with DPoP configured
    /// `Authorization: DPoP ...` and a single-use proof for this method and URL (`ath`, the
    /// origin's last nonce). Ask again for every request; after a 401 nonce challenge, call
    /// `noteResponse(_:for:)` first (or use `send(authorized:resource:)`).
    /// - Throws: `.invalidConfiguration` for a URL that is not https (plain http only on this
    ///   machine, unless `allowsInsecureHTTP`), or what `accessToken(forceRefresh:resource:)` throws.
    public func authorizationHeaders(for url: URL, method: String, resource: URL? = nil) async throws(AuthError) -> [String: String] {
        try AuthorizedRequest.checkDestination(url, allowsInsecureHTTP: provider.configuration.allowsInsecureHTTP)
        let token = try await cachedToken(forceRefresh: false, resource: resource)
        return try await AuthorizedRequest.headers(accessToken: token.accessToken, dpop: try provider.prover(for: token), method: method, url: url)
    }

    /// Sends `request` with `authorizationHeaders(for:method:resource:)` added, through the
    /// client's transport; with DPoP, retried exactly once with a new proof on a nonce
    /// challenge carrying a new nonce. Any other answer is returned as it is.
    public func send(authorized request: HTTPRequest, resource: URL? = nil) async throws(AuthError) -> HTTPResponse {
        try AuthorizedRequest.checkDestination(request.url, allowsInsecureHTTP: provider.configuration.allowsInsecureHTTP)
        let token = try await cachedToken(forceRefresh: false, resource: resource)
        return try await AuthorizedRequest.send(
            request, accessToken: token.accessToken, dpop: try provider.prover(for: token), transport: provider.http.transport)
    }

    /// Remembers the `DPoP-Nonce` a resource server sent with `response` to a request to
    /// `url`, for the next proof to that origin.
    public func noteResponse(_ response: HTTPResponse, for url: URL) async {
        await provider.dpopNonces.learn(from: response, for: url)
    }

    /// The cached token for `resource`, or a new one (see `accessToken(forceRefresh:resource:)`).
    private func cachedToken(forceRefresh: Bool, resource: URL?) async throws(AuthError) -> AuthSession {
        let indicator = try resource.map { (url) throws(AuthError) in try ResourceURI.indicator(url) }
        let storage = storage(for: indicator)
        let slot = indicator ?? ""
        let cached = try await storage.load()
        if !forceRefresh, let cached, fits(cached), !schedule.isDue(cached, now: provider.clock.now(), lastRefresh: lastFetch[slot]) {
            return cached
        }
        let task = inFlight[slot] ?? startFetch(storage: storage, resource: indicator, seen: cached, force: forceRefresh)
        // A cancelled caller stops waiting; the request goes on for the others.
        guard let result = await SharedTaskWait.result(of: task) else { throw .cancelled }
        switch result {
        case .success(let token): return token
        case .failure(let error as AuthError): throw error
        case .failure: throw .cancelled
        }
    }

    /// Whether a cached token is of the kind configured: a Bearer token cached before DPoP was
    /// turned on is never handed out as if it were bound (nor a bound one as a Bearer token).
    private nonisolated func fits(_ cached: AuthSession) -> Bool { Self.fits(cached, dpop: provider.configuration.dpop) }

    /// A cached token fits when it is bound exactly when DPoP is configured, and its key (if
    /// any) can be read: a token whose key is unreadable is replaced, never kept until expiry.
    static func fits(_ cached: AuthSession, dpop: Bool) -> Bool {
        guard cached.isDPoPBound == dpop else { return false }
        guard let pem = cached.dpopKey else { return true }
        return (try? DPoPProver.key(stored: pem)) != nil
    }

    /// Deletes the cached token (`resource`: that resource's; `nil`: the one without resource).
    public func clearCache(resource: URL? = nil) async throws(AuthError) {
        try await storage(for: try resource.map { (url) throws(AuthError) in try ResourceURI.indicator(url) }).delete()
    }

    /// Where the token for `resource` (an indicator; `nil`: none) is cached.
    private func storage(for resource: String?) -> SessionStorage {
        guard let resource else { return storage }
        if let known = resourceStorages[resource] { return known }
        let made = SessionStorage(
            store: storage.store,
            key: CredentialKey(service: storage.key.service, account: storage.key.account + " resource \(resource)", label: storage.key.label),
            options: storage.options)
        if resourceStorages.count < ResourceTokenSet.maximumCount { resourceStorages[resource] = made }
        return made
    }

    private func startFetch(storage: SessionStorage, resource: String?, seen: AuthSession?, force: Bool) -> Task<AuthSession, any Error> {
        let started = provider.clock.now()
        let slot = resource ?? ""
        let fetch = Fetch(
            provider: provider, storage: storage, scopes: scopes, resource: resource, schedule: schedule, lastFetch: lastFetch[slot],
            retry: retry, seen: seen, force: force)
        // The task records its own end, so that a cancelled waiter never leaves it in flight.
        let task = Task<AuthSession, any Error> {
            let outcome: Result<AuthSession, AuthError>
            do throws(AuthError) { outcome = .success(try await fetch.run()) } catch { outcome = .failure(error) }
            fetchEnded(slot, startedAt: started, succeeded: (try? outcome.get()) != nil)
            return try outcome.get()
        }
        inFlight[slot] = task
        return task
    }

    private func fetchEnded(_ slot: String, startedAt started: Date, succeeded: Bool) {
        inFlight[slot] = nil
        if succeeded, lastFetch[slot].map({ $0 < started }) ?? true { lastFetch[slot] = started }
    }

    private struct Fetch: Sendable {
        let provider: OIDCProvider
        let storage: SessionStorage
        let scopes: [String]
        let resource: String?
        let schedule: RefreshSchedule
        let lastFetch: Date?
        let retry: RetryPolicy
        let seen: AuthSession?
        let force: Bool

        func run() async throws(AuthError) -> AuthSession {
            try await storage.exclusively { () async throws(AuthError) -> AuthSession in
                // Another process may have fetched one while we waited for the lock.
                if let cached = try await storage.load(), cached != seen || !force,
                    ClientCredentialsClient.fits(cached, dpop: provider.configuration.dpop),
                    !schedule.isDue(cached, now: provider.clock.now(), lastRefresh: lastFetch)
                {
                    return cached
                }
                var parameters = scopes.isEmpty ? [] : [("scope", scopes.joined(separator: " "))]
                if let resource { parameters.append(("resource", resource)) }
                // A key per token, cached with it: the token is bound to it (RFC 9449), and a
                // new token never depends on an old key.
                let dpop = provider.configuration.dpop ? try DPoPProver.newKey() : nil
                let response: TokenResponse
                do throws(AuthError) {
                    response = try await retry.run { () async throws(AuthError) -> TokenResponse in
                        try await provider.token(grant: "client_credentials", parameters, dpopKey: dpop?.key)
                    }
                } catch .invalidTarget {
                    throw .invalidTarget(resource: resource)
                }
                let now = provider.clock.now()
                var session = AuthSession(
                    accessToken: response.accessToken, expiresAt: response.expiresIn.map { now.addingTimeInterval($0) },
                    scope: response.scope, obtainedAt: now)
                session.dpopKey = dpop?.pem
                try await storage.save(session)
                provider.logger.info("new access token cached", metadata: ["category": "client-credentials"])
                return session
            }
        }
    }
}
