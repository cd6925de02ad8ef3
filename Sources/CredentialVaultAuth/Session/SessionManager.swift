import Logging
import CredentialVault
import Foundation

/// Keeps a signed-in session alive: hands out valid access tokens, refreshes them near expiry
/// (on demand and in the background), once at a time in this process and, with an
/// `ExclusiveAccessStore` such as the sealed file, across processes; publishes the auth state.
///
/// The session is stored through the application's store, only ever through its asynchronous
/// API (`AsyncTokenStorageAdapter`): no call of the manager blocks its caller's thread on the store.
/// The provider is reached only through a `SessionRefresher`.
///
/// The published state says why there is no session (`UnauthenticatedReason`): a locked or
/// failing store is reported as such, never as signed out; `reload()` reads the store again
/// (after the user unlocked the keyring, say).
public actor SessionManager {
    /// Tuning of the session manager.
    public struct Configuration: Sendable {
        /// A session whose access token expires within this margin is refreshed (default 60 s);
        /// a token whose whole lifetime is shorter than twice the margin, at half of its lifetime.
        public var refreshMargin: Duration
        /// Retries of transient refresh failures (default: 3 with exponential backoff).
        public var retryPolicy: RetryPolicy
        /// Refresh in the background when the margin is reached (default `true`).
        public var proactiveRefresh: Bool
        /// Revoke the tokens at the provider on sign-out (default `true`).
        public var revokeOnSignOut: Bool
        /// Refreshes that are not forced, in the background or on demand, never run more often
        /// than this (default 2 s), whatever lifetime the provider gives its tokens: within it,
        /// the token just obtained is handed out, even one the provider issued already expired.
        public var minimumRefreshInterval: Duration
        /// Where refreshes are counted and timed (trait `Metrics`: the bootstrapped
        /// `MetricsSystem`; tests give a factory of their own).
        package var metrics = VaultMetrics()

        /// Creates a configuration.
        public init(
            refreshMargin: Duration = .seconds(60), retryPolicy: RetryPolicy = .default,
            proactiveRefresh: Bool = true, revokeOnSignOut: Bool = true, minimumRefreshInterval: Duration = .seconds(2)
        ) {
            self.refreshMargin = refreshMargin
            self.retryPolicy = retryPolicy
            self.proactiveRefresh = proactiveRefresh
            self.revokeOnSignOut = revokeOnSignOut
            self.minimumRefreshInterval = max(minimumRefreshInterval, .milliseconds(10))
        }
    }

    let storage: SessionStorage
    let refresher: any SessionRefresher
    /// The configuration in use.
    public nonisolated let configuration: Configuration
    let clock: any CredentialClock
    let logger: Logger
    let broadcaster: StateBroadcaster
    let epoch = SignOutEpoch()
    /// The refresh in flight, shared by every caller until it ends.
    var inFlight: (id: Int, task: Task<AuthSession, any Error>)?
    /// The refresh in flight per resource (RFC 8707), shared like `inFlight` (at most one per
    /// resource: bounded by the callers' distinct resources at one time).
    var resourceInFlight: [String: Task<AuthSession, any Error>] = [:]
    var nextID = 0
    var autoRefresh: (id: Int, task: Task<Void, Never>)?
    /// Set by `finishAutoRefresh()`: the process is shutting down, so nothing starts the
    /// background refresh again (a sign-in or a call would, with `proactiveRefresh`).
    var autoRefreshFinished = false
    /// When the last successful refresh of this manager started (the floor of the due rule).
    var lastRefresh: Date?
    /// The lifetime of the last token a refresh for `credentials(minTTL:)` obtained: the
    /// provider's, which no refresh will exceed (so a larger minTTL needs no new request).
    var refreshedLifetime: Duration?
    /// How the background refresh waits for its next turn: `Task.sleep`. Internal, for tests
    /// only (`setBackgroundSleep`): they run the loop on a `ManualClock` instead of waiting, and
    /// see when a sign-out stops it.
    var backgroundSleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// The due rule: one for on-demand calls and the background loop.
    var schedule: RefreshSchedule {
        RefreshSchedule(margin: configuration.refreshMargin, floor: configuration.minimumRefreshInterval)
    }

    /// Creates a manager for the session stored under `key` in `store`, and reads it: the
    /// first state is `.authenticated` when a session is stored, `.unauthenticated(.neverSignedIn)`
    /// when none is, and `.unauthenticated(.storeLocked)` (or `.storeFailure`) when the store
    /// could not say; the store's answer is awaited, never waited for on this thread.
    /// - Parameters:
    ///   - refresher: the provider side (the OIDC client's token endpoint, ...).
    ///   - storageOptions: how the session is stored (default: persistent, device-only).
    ///   - clock: the source of "now" for expiry decisions.
    ///   - logger: where it logs (a swift-log `Logger`; default: none, silent). Every message and metadata
    ///     value passes through `Redactor` first, at every level.
    public init(
        refresher: any SessionRefresher, store: any AsyncTokenStorageAdapter, key: CredentialKey,
        storageOptions: StorageOptions = .default, configuration: Configuration = Configuration(),
        clock: any CredentialClock = SystemClock(), logger: Logger = .credentialVaultSilent
    ) async {
        let storage = SessionStorage(store: store, key: key, options: storageOptions)
        self.storage = storage
        self.refresher = refresher
        self.configuration = configuration
        self.clock = clock
        self.logger = logger.redacting
        self.broadcaster = StateBroadcaster(initial: await Self.firstState(of: storage, logger: logger.redacting))
    }

    /// The state the stored session gives before anything else happened.
    private static func firstState(of storage: SessionStorage, logger: Logger) async -> AuthState {
        let start = AuthState.unauthenticated(.neverSignedIn)
        do {
            return start.afterReading(try await storage.load())
        } catch .storage(let error) {
            logger.warning("the stored session could not be read: \(error)", metadata: ["category": "session"])
            return AuthState.afterStoreFailure(error) ?? .unauthenticated(.storeFailure(error))
        } catch {
            // Cancelled while reading: the store said nothing, and `reload()` asks again.
            return .unauthenticated(.storeFailure(.cancelled))
        }
    }

    deinit {
        autoRefresh?.task.cancel()
        broadcaster.finishAll()
    }

    /// The current state.
    public nonisolated var state: AuthState { broadcaster.current }

    /// A stream of auth states: the current one first, then every change, until the manager goes away.
    public nonisolated func states() -> AsyncStream<AuthState> { broadcaster.stream() }

    /// Whether a session is stored whose access token is valid now or that can be refreshed, as
    /// far as this manager knows: answered from memory (the last time it read or wrote the
    /// store), with no network and no store call, so it can be asked on any thread at any time.
    /// `false` while the store is locked or failing.
    public nonisolated var hasUsableSession: Bool {
        broadcaster.knownSession?.isUsable(at: clock.now()) ?? false
    }

    /// The stored session as it is, without refreshing (`nil` when signed out). The state is
    /// updated with what the read found.
    public func storedSession() async throws(AuthError) -> AuthSession? { try await readStored() }

    /// Reads the stored session again and publishes what the store says: after the user
    /// unlocked a locked store, after another process signed in or out. Store errors are not
    /// thrown: they are the state (`.unauthenticated(.storeLocked)`, `.storeFailure`).
    /// Returns the new state.
    @discardableResult
    public func reload() async -> AuthState {
        do {
            if try await readStored() != nil, configuration.proactiveRefresh { startAutoRefresh() }
        } catch {
            logger.debug("reload: \(error)", metadata: ["category": "session"])
        }
        return broadcaster.current
    }

    /// The stored session, refreshed first when its access token is due (see
    /// `Configuration.refreshMargin` and `minimumRefreshInterval`). Throws `notSignedIn` when
    /// there is none, `invalidGrant` when the refresh token was refused, `storage(.locked)`
    /// when the store is locked (the state then says `.storeLocked`).
    public func getSession() async throws(AuthError) -> AuthSession {
        try await current(try await requireStored())
    }

    /// A valid access token; with `forceRefresh`, one newer than the currently stored one (for
    /// when a resource server rejected it). Concurrent callers share one refresh.
    public func getAccessToken(forceRefresh: Bool = false) async throws(AuthError) -> String {
        guard forceRefresh else { return try await getSession().accessToken }
        return try await refresh(seen: try await requireStored(), force: true).accessToken
    }

    /// Stores a new session (after a sign-in) and publishes `.authenticated`.
    public func establish(_ session: AuthSession) async throws(AuthError) {
        let storage = self.storage
        do {
            try await storage.exclusively { () async throws(AuthError) in try await storage.save(session) }
        } catch {
            publishFailure(error)
            throw error
        }
        lastRefresh = nil  // a new session: the floor of the previous one's refreshes does not apply
        refreshedLifetime = nil
        broadcaster.publish(.authenticated(SessionSummary(session)))
        if configuration.proactiveRefresh { startAutoRefresh() }
    }

    /// Signs out: waits for a refresh in flight (whose result is then discarded), deletes the
    /// stored session, and revokes it at the provider when `revoke` (default: the
    /// configuration's `revokeOnSignOut`). Returns the removed session (`nil` if there was
    /// none), e.g. for an end-session URL's `id_token_hint`. A store that cannot delete
    /// (locked) throws, and the state says so: the session is still stored.
    @discardableResult
    public func signOut(revoke: Bool? = nil) async throws(AuthError) -> AuthSession? {
        epoch.advance()
        stopAutoRefresh()
        if let running = inFlight?.task { _ = await running.result }
        for running in resourceInFlight.values { _ = await running.result }
        let storage = self.storage
        let removed: AuthSession?
        do {
            removed = try await storage.exclusively { () async throws(AuthError) -> AuthSession? in try await Self.remove(from: storage) }
        } catch {
            publishFailure(error)
            throw error
        }
        broadcaster.publish(.unauthenticated(.signedOut))
        logger.info("signed out", metadata: ["category": "session"])
        if revoke ?? configuration.revokeOnSignOut, let removed {
            do { try await refresher.revoke(removed) } catch {
                logger.warning("revoking the tokens at the provider failed: \(error)", metadata: ["category": "session"])
            }
        }
        return removed
    }

    /// Deletes the stored session and returns it. An unreadable one is deleted all the same.
    private static func remove(from storage: SessionStorage) async throws(AuthError) -> AuthSession? {
        let session: AuthSession?
        do { session = try await storage.load() } catch .storage(.corrupted) { session = nil }
        try await storage.delete()
        return session
    }

    // MARK: - Reading the store

    /// Reads the stored session and publishes what the read found (unless a refresh is in
    /// flight: its end publishes the outcome).
    func readStored() async throws(AuthError) -> AuthSession? {
        let session: AuthSession?
        do { session = try await storage.load() } catch {
            publishFailure(error)
            throw error
        }
        if inFlight == nil { broadcaster.update { $0.afterReading(session) } }
        return session
    }

    /// The stored session; `notSignedIn` when there is none.
    func requireStored() async throws(AuthError) -> AuthSession {
        guard let stored = try await readStored() else { throw .notSignedIn }
        return stored
    }

    /// `stored`, refreshed first when it is due; starts the background refresh when configured.
    func current(_ stored: AuthSession) async throws(AuthError) -> AuthSession {
        var stored = stored
        let now = clock.now()
        // A read made while a refresh was landing holds the session that refresh replaced: due,
        // but within the refresh floor, it would be handed out as it is (expired). Read again:
        // the refresh's result is stored.
        if let lastRefresh, stored.obtainedAt < lastRefresh, schedule.isDue(stored, now: now, lastRefresh: nil),
            !schedule.isDue(stored, now: now, lastRefresh: lastRefresh), let newer = try await readStored()
        {
            stored = newer
        }
        let session =
            schedule.isDue(stored, now: clock.now(), lastRefresh: lastRefresh)
            ? try await refresh(seen: stored, force: false) : stored
        if configuration.proactiveRefresh { startAutoRefresh() }
        return session
    }

    /// Publishes what a store failure means for the session (locked, failing).
    func publishFailure(_ error: AuthError) {
        guard case .storage(let failure) = error, let state = AuthState.afterStoreFailure(failure) else { return settleRefreshing() }
        logger.warning("the session store failed: \(failure)", metadata: ["category": "session"])
        broadcaster.publish(state)
    }

    /// Never leaves `.refreshing` published once no refresh is in flight (a refresh that ended
    /// after a sign-out that then failed, a store that was busy when its end was read): the
    /// session last seen, or "never signed in" when none was.
    func settleRefreshing() {
        guard inFlight == nil, case .refreshing = broadcaster.current else { return }
        broadcaster.publish(broadcaster.knownSession.map { .authenticated($0) } ?? .unauthenticated(.neverSignedIn))
    }
}
