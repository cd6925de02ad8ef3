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
    private var inFlight: (task: Task<AuthSession, any Error>, started: Date)?
    /// When the last successful token request started (the floor of the due rule).
    private var lastFetch: Date?

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
        // Refused rather than ignored: the caller asked for sender-constrained tokens and
        // would otherwise get Bearer ones without knowing.
        guard !configuration.dpop else { throw .unsupported("DPoP is not supported for the client credentials grant yet") }
        self.provider = OIDCProvider(configuration: configuration, transport: transport, clock: clock, logger: logger)
        self.scopes = scopes
        self.schedule = RefreshSchedule(margin: refreshMargin, floor: max(minimumRefreshInterval, .milliseconds(10)))
        self.retry = retryPolicy
        let scopeText = scopes.sorted().joined(separator: " ")
        self.storage = SessionStorage(
            store: store,
            key: CredentialKey(
                service: configuration.storageService,
                account: "client-credentials \(configuration.clientID)@\(configuration.issuer.absoluteString) [\(scopeText)]",
                label: "client credentials token of \(configuration.clientID)"),
            options: storageOptions)
    }

    /// A valid access token: the cached one unless it is due (or `forceRefresh`), else a new
    /// one from the token endpoint, cached before it is returned.
    public func accessToken(forceRefresh: Bool = false) async throws(AuthError) -> String {
        let cached = try await storage.load()
        if !forceRefresh, let cached, !schedule.isDue(cached, now: provider.clock.now(), lastRefresh: lastFetch) {
            return cached.accessToken
        }
        let task = inFlight?.task ?? startFetch(seen: cached, force: forceRefresh)
        // A cancelled caller stops waiting; the request goes on for the others.
        guard let result = await SharedTaskWait.result(of: task) else { throw .cancelled }
        switch result {
        case .success(let session): return session.accessToken
        case .failure(let error as AuthError): throw error
        case .failure: throw .cancelled
        }
    }

    /// Deletes the cached token.
    public func clearCache() async throws(AuthError) { try await storage.delete() }

    private func startFetch(seen: AuthSession?, force: Bool) -> Task<AuthSession, any Error> {
        let started = provider.clock.now()
        let fetch = Fetch(
            provider: provider, storage: storage, scopes: scopes, schedule: schedule, lastFetch: lastFetch, retry: retry,
            seen: seen, force: force)
        // The task records its own end, so that a cancelled waiter never leaves it in flight.
        let task = Task<AuthSession, any Error> {
            let outcome: Result<AuthSession, AuthError>
            do throws(AuthError) { outcome = .success(try await fetch.run()) } catch { outcome = .failure(error) }
            fetchEnded(startedAt: started, succeeded: (try? outcome.get()) != nil)
            return try outcome.get()
        }
        inFlight = (task, started)
        return task
    }

    private func fetchEnded(startedAt started: Date, succeeded: Bool) {
        inFlight = nil
        if succeeded, lastFetch.map({ $0 < started }) ?? true { lastFetch = started }
    }

    private struct Fetch: Sendable {
        let provider: OIDCProvider
        let storage: SessionStorage
        let scopes: [String]
        let schedule: RefreshSchedule
        let lastFetch: Date?
        let retry: RetryPolicy
        let seen: AuthSession?
        let force: Bool

        func run() async throws(AuthError) -> AuthSession {
            try await storage.exclusively { () async throws(AuthError) -> AuthSession in
                // Another process may have fetched one while we waited for the lock.
                if let cached = try await storage.load(), cached != seen || !force,
                    !schedule.isDue(cached, now: provider.clock.now(), lastRefresh: lastFetch)
                {
                    return cached
                }
                let parameters = scopes.isEmpty ? [] : [("scope", scopes.joined(separator: " "))]
                let response = try await retry.run { () async throws(AuthError) -> TokenResponse in
                    try await provider.token(grant: "client_credentials", parameters)
                }
                let now = provider.clock.now()
                let session = AuthSession(
                    accessToken: response.accessToken, expiresAt: response.expiresIn.map { now.addingTimeInterval($0) },
                    scope: response.scope, obtainedAt: now)
                try await storage.save(session)
                provider.logger.info("new access token cached", metadata: ["category": "client-credentials"])
                return session
            }
        }
    }
}
