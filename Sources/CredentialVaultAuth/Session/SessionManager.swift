import CredentialVault
import Foundation

/// Keeps a signed-in session alive: hands out valid access tokens, refreshes them near expiry
/// (on demand and in the background), once at a time in this process and, with an
/// `ExclusiveAccessStore` such as the sealed file, across processes; publishes the auth state.
///
/// The session is stored through the application's `TokenStorageAdapter`; the provider is
/// reached only through a `SessionRefresher`.
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

    private let storage: SessionStorage
    private let refresher: any SessionRefresher
    /// The configuration in use.
    public nonisolated let configuration: Configuration
    private let clock: any CredentialClock
    private let logger: AuthLogger
    private let broadcaster: StateBroadcaster
    private let epoch = SignOutEpoch()
    private var inFlight: (id: Int, task: Task<AuthSession, any Error>, started: Date)?
    private var nextID = 0
    private var autoRefresh: Task<Void, Never>?
    /// When the last successful refresh of this manager started (the floor of the due rule).
    private var lastRefresh: Date?

    /// The due rule: one for on-demand calls and the background loop.
    private var schedule: RefreshSchedule {
        RefreshSchedule(margin: configuration.refreshMargin, floor: configuration.minimumRefreshInterval)
    }

    /// Creates a manager for the session stored under `key` in `store`.
    /// - Parameters:
    ///   - refresher: the provider side (the OIDC client's token endpoint, ...).
    ///   - storageOptions: how the session is stored (default: persistent, device-only).
    ///   - clock: the source of "now" for expiry decisions.
    public init(
        refresher: any SessionRefresher, store: any TokenStorageAdapter, key: CredentialKey,
        storageOptions: StorageOptions = .default, configuration: Configuration = Configuration(),
        clock: any CredentialClock = SystemClock(), logger: AuthLogger = AuthLogger()
    ) {
        self.storage = SessionStorage(store: store, key: key, options: storageOptions)
        self.refresher = refresher
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        let initial = (try? storage.load()).flatMap { $0 }.map { AuthState.authenticated($0.user) } ?? .unauthenticated
        self.broadcaster = StateBroadcaster(initial: initial)
    }

    deinit {
        autoRefresh?.cancel()
        broadcaster.finishAll()
    }

    /// The current state.
    public nonisolated var state: AuthState { broadcaster.current }

    /// A stream of auth states: the current one first, then every change, until the manager goes away.
    public nonisolated func states() -> AsyncStream<AuthState> { broadcaster.stream() }

    /// The stored session as it is, without refreshing (`nil` when signed out).
    public func storedSession() throws(AuthError) -> AuthSession? { try storage.load() }

    /// The stored session, refreshed first when its access token is due (see
    /// `Configuration.refreshMargin` and `minimumRefreshInterval`). Throws `notSignedIn` when there is none, `invalidGrant` when the refresh token was refused.
    public func getSession() async throws(AuthError) -> AuthSession {
        guard let stored = try storage.load() else {
            broadcaster.publish(.unauthenticated)
            throw .notSignedIn
        }
        let session: AuthSession
        if schedule.isDue(stored, now: clock.now(), lastRefresh: lastRefresh) {
            session = try await refresh(seen: stored, force: false)
        } else {
            session = stored
            if case .unauthenticated = broadcaster.current { broadcaster.publish(.authenticated(stored.user)) }
        }
        if configuration.proactiveRefresh { startAutoRefresh() }
        return session
    }

    /// A valid access token; with `forceRefresh`, one newer than the currently stored one (for
    /// when a resource server rejected it). Concurrent callers share one refresh.
    public func getAccessToken(forceRefresh: Bool = false) async throws(AuthError) -> String {
        guard forceRefresh else { return try await getSession().accessToken }
        guard let stored = try storage.load() else {
            broadcaster.publish(.unauthenticated)
            throw .notSignedIn
        }
        return try await refresh(seen: stored, force: true).accessToken
    }

    /// Stores a new session (after a sign-in) and publishes `.authenticated`.
    public func establish(_ session: AuthSession) async throws(AuthError) {
        let storage = self.storage
        try await storage.exclusively { () throws(AuthError) in try storage.save(session) }
        broadcaster.publish(.authenticated(session.user))
        if configuration.proactiveRefresh { startAutoRefresh() }
    }

    /// Signs out: waits for a refresh in flight (whose result is then discarded), deletes the
    /// stored session, and revokes it at the provider when `revoke` (default: the
    /// configuration's `revokeOnSignOut`). Returns the removed session (`nil` if there was
    /// none), e.g. for an end-session URL's `id_token_hint`.
    @discardableResult
    public func signOut(revoke: Bool? = nil) async throws(AuthError) -> AuthSession? {
        epoch.advance()
        stopAutoRefresh()
        if let running = inFlight?.task { _ = await running.result }
        let storage = self.storage
        let removed = try await storage.exclusively { () throws(AuthError) -> AuthSession? in
            let session = try? storage.load()
            try storage.delete()
            return session ?? nil
        }
        broadcaster.publish(.unauthenticated)
        logger.info("session", "signed out")
        if revoke ?? configuration.revokeOnSignOut, let removed {
            do { try await refresher.revoke(removed) } catch {
                logger.warning("session", "revoking the tokens at the provider failed: \(error)")
            }
        }
        return removed
    }

    /// Starts refreshing in the background when the margin is reached (done automatically
    /// after a sign-in or a `getSession()` when `proactiveRefresh` is set).
    public func startAutoRefresh() {
        guard autoRefresh == nil else { return }
        let box = WeakSessionManager(self)
        autoRefresh = Task { await Self.autoRefreshLoop(box) }
    }

    /// Stops the background refresh.
    public func stopAutoRefresh() {
        autoRefresh?.cancel()
        autoRefresh = nil
    }

    // MARK: - Single flight

    private func refresh(seen: AuthSession, force: Bool) async throws(AuthError) -> AuthSession {
        let id: Int
        let task: Task<AuthSession, any Error>
        let started: Date
        if let running = inFlight {
            (id, task, started) = running
        } else {
            nextID += 1
            id = nextID
            started = clock.now()
            let operation = RefreshOperation(
                storage: storage, refresher: refresher, schedule: schedule, lastRefresh: lastRefresh,
                retry: configuration.retryPolicy, clock: clock, logger: logger, broadcaster: broadcaster,
                epoch: epoch, startEpoch: epoch.current, seen: seen, force: force)
            let broadcaster = self.broadcaster
            let storage = self.storage
            task = Task {
                broadcaster.publish(.refreshing)
                do {
                    let session = try await operation.run()
                    broadcaster.publish(.authenticated(session.user))
                    return session
                } catch {
                    // Whatever failed, the state reflects what is stored now.
                    let stored = (try? storage.load()).flatMap { $0 }
                    broadcaster.publish(stored.map { .authenticated($0.user) } ?? .unauthenticated)
                    throw error
                }
            }
            inFlight = (id, task, started)
        }
        let result = await task.result
        if inFlight?.id == id { inFlight = nil }
        switch result {
        case .success(let session):
            refreshed(startedAt: started)
            return session
        case .failure(let error as AuthError): throw error
        case .failure(is CancellationError): throw .cancelled
        case .failure: throw .networkError("refresh failed")
        }
    }

    /// Records a successful refresh for the floor of the due rule.
    private func refreshed(startedAt started: Date) {
        if lastRefresh.map({ $0 < started }) ?? true { lastRefresh = started }
    }

    // MARK: - Background refresh

    /// How long to wait before the next background refresh; `nil` stops the loop.
    private func autoRefreshDelay(failures: Int) -> Duration? {
        guard let session = try? storage.load(), session.refreshToken != nil else { return nil }
        return schedule.delay(for: session, now: clock.now(), failures: failures)
    }

    private func backgroundRefresh() async throws(AuthError) {
        guard let stored = try storage.load() else { throw .notSignedIn }
        if schedule.isDue(stored, now: clock.now(), lastRefresh: lastRefresh) {
            _ = try await refresh(seen: stored, force: false)
        }
    }

    private static func autoRefreshLoop(_ box: WeakSessionManager) async {
        var failures = 0
        while !Task.isCancelled {
            guard let delay = await box.manager?.autoRefreshDelay(failures: failures) else { return }
            do { try await Task.sleep(for: delay) } catch { return }
            guard let manager = box.manager else { return }
            do {
                try await manager.backgroundRefresh()
                failures = 0
            } catch .invalidGrant, .notSignedIn, .cancelled {
                return
            } catch {
                failures += 1
            }
        }
    }
}

/// Lets the background loop reach the manager without keeping it alive.
private final class WeakSessionManager: @unchecked Sendable {
    weak var manager: SessionManager?
    init(_ manager: SessionManager) { self.manager = manager }
}
