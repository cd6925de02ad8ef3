import CredentialVault
import Foundation

/// The single-flight refresh: one refresh at a time in this manager, shared by every caller
/// that arrives while it runs; each caller's wait can be cancelled without cancelling it.
extension SessionManager {
    func refresh(seen: AuthSession, force: Bool) async throws(AuthError) -> AuthSession {
        try await Self.awaitRefresh(inFlight?.task ?? startRefresh(seen: seen, force: force))
    }

    /// The outcome of a shared refresh `task` for this caller, whose wait alone is cancelled
    /// when it is (the refresh goes on for the others).
    static func awaitRefresh(_ task: Task<AuthSession, any Error>) async throws(AuthError) -> AuthSession {
        guard let result = await SharedTaskWait.result(of: task) else { throw .cancelled }
        switch result {
        case .success(let session): return session
        case .failure(let error as AuthError): throw error
        case .failure(is CancellationError): throw .cancelled
        case .failure: throw .networkError("refresh failed")
        }
    }

    private func startRefresh(seen: AuthSession, force: Bool) -> Task<AuthSession, any Error> {
        nextID += 1
        let id = nextID
        let started = clock.now()
        let startEpoch = epoch.current
        let operation = RefreshOperation(
            storage: storage, refresher: refresher, schedule: schedule, lastRefresh: lastRefresh,
            retry: configuration.retryPolicy, clock: clock, logger: logger, broadcaster: broadcaster,
            epoch: epoch, startEpoch: startEpoch, seen: seen, force: force, metrics: configuration.metrics)
        // The task holds the manager until it ends (a refresh is bounded by its timeouts), so
        // that its end is always recorded.
        let task = Task<AuthSession, any Error> {
            broadcaster.publish(.refreshing)
            let outcome: Result<AuthSession, AuthError>
            do throws(AuthError) { outcome = .success(try await operation.run()) } catch { outcome = .failure(error) }
            await refreshEnded(id: id, startedAt: started, epoch: startEpoch, outcome: outcome)
            return try outcome.get()
        }
        inFlight = (id, task)
        return task
    }

    /// Records the end of refresh `id` and publishes its outcome. A failure publishes what is
    /// stored now (read again: a refused refresh deleted it, another process may have
    /// refreshed it, the store may be locked); after a sign-out the sign-out publishes.
    private func refreshEnded(id: Int, startedAt started: Date, epoch startEpoch: Int, outcome: Result<AuthSession, AuthError>) async {
        switch outcome {
        case .success(let session):
            if lastRefresh.map({ $0 < started }) ?? true { lastRefresh = started }
            if inFlight?.id == id { inFlight = nil }
            broadcaster.publish(.authenticated(SessionSummary(session)))
        case .failure(let error):
            if inFlight?.id == id { inFlight = nil }
            // Refused: the refusal is published (`refreshRefused`), even when deleting the dead
            // session failed; reading it back would call it authenticated again.
            if case .invalidGrant = error { return settleRefreshing() }
            // A chain narrowed to a resource can never extend an expired main token: refused
            // until a sign-in replaces the session (`afterReading` keeps saying so).
            if case .refreshTokenNarrowed = error, let stored = try? await storage.load(),
                stored.expires(within: .zero, of: clock.now())
            {
                broadcaster.publish(.unauthenticated(.refreshRefused))
                return settleRefreshing()
            }
            guard epoch.current == startEpoch else { return settleRefreshing() }
            _ = try? await readStored()  // its failure is published as the state
            settleRefreshing()
        }
    }
}
