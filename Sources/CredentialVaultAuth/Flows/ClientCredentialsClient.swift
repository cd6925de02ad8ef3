import CredentialVault
import Foundation

/// The client credentials grant for services: gets an access token with the client's own
/// credentials and caches it in the vault until it is within `refreshMargin` of expiry.
/// Concurrent callers share one token request (and, with an `ExclusiveAccessStore`, so do
/// processes sharing the vault).
public actor ClientCredentialsClient {
    private let provider: OIDCProvider
    private let storage: SessionStorage
    private let scopes: [String]
    private let refreshMargin: Duration
    private let retry: RetryPolicy
    private var inFlight: Task<AuthSession, any Error>?

    /// Creates the client.
    /// - Parameters:
    ///   - configuration: issuer, client id and a confidential `clientAuthentication`
    ///     (`scopes` there are ignored; pass them here).
    ///   - scopes: the scopes to request (none: the provider's default).
    ///   - store: where the token is cached (persistent, device-only).
    ///   - refreshMargin: a cached token expiring within this margin is replaced (default 60 s).
    public init(
        configuration: OIDCConfiguration, scopes: [String] = [], store: any TokenStorageAdapter,
        refreshMargin: Duration = .seconds(60), retryPolicy: RetryPolicy = .default,
        transport: any HTTPTransport = DefaultHTTPTransport.make(), clock: any CredentialClock = SystemClock(),
        logger: AuthLogger = AuthLogger()
    ) throws(AuthError) {
        try configuration.validate()
        guard configuration.clientAuthentication.isConfidential else {
            throw .invalidConfiguration("the client credentials grant needs a client secret")
        }
        self.provider = OIDCProvider(configuration: configuration, transport: transport, clock: clock, logger: logger)
        self.scopes = scopes
        self.refreshMargin = refreshMargin
        self.retry = retryPolicy
        let scopeText = scopes.sorted().joined(separator: " ")
        self.storage = SessionStorage(
            store: store,
            key: CredentialKey(
                service: configuration.storageService,
                account: "client-credentials \(configuration.clientID)@\(configuration.issuer.absoluteString) [\(scopeText)]",
                label: "client credentials token of \(configuration.clientID)"),
            options: .default)
    }

    /// A valid access token: the cached one unless it expires within the margin (or
    /// `forceRefresh`), else a new one from the token endpoint, cached before it is returned.
    public func accessToken(forceRefresh: Bool = false) async throws(AuthError) -> String {
        if !forceRefresh, let cached = try storage.load(), !cached.expires(within: refreshMargin, of: provider.clock.now()) {
            return cached.accessToken
        }
        let task: Task<AuthSession, any Error>
        if let running = inFlight {
            task = running
        } else {
            let seen = try storage.load()
            let fetch = Fetch(provider: provider, storage: storage, scopes: scopes, margin: refreshMargin, retry: retry, seen: seen, force: forceRefresh)
            task = Task { try await fetch.run() }
            inFlight = task
        }
        let result = await task.result
        if inFlight == task { inFlight = nil }
        switch result {
        case .success(let session): return session.accessToken
        case .failure(let error as AuthError): throw error
        case .failure: throw .cancelled
        }
    }

    /// Deletes the cached token.
    public func clearCache() throws(AuthError) { try storage.delete() }

    private struct Fetch: Sendable {
        let provider: OIDCProvider
        let storage: SessionStorage
        let scopes: [String]
        let margin: Duration
        let retry: RetryPolicy
        let seen: AuthSession?
        let force: Bool

        func run() async throws(AuthError) -> AuthSession {
            try await storage.exclusively { () async throws(AuthError) -> AuthSession in
                // Another process may have fetched one while we waited for the lock.
                if let cached = try storage.load(), cached != seen || !force,
                    !cached.expires(within: margin, of: provider.clock.now())
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
                try storage.save(session)
                provider.logger.info("client-credentials", "new access token cached")
                return session
            }
        }
    }
}
