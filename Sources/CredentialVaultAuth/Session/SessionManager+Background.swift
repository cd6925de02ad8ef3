import CredentialVault
import Foundation

/// The background refresh: a loop that sleeps until the stored session is due, refreshes it,
/// and backs off after failures; it ends when there is nothing to refresh (signed out, refused,
/// no refresh token, the store unreadable: the state then says why).
extension SessionManager {
    /// Starts refreshing in the background when the margin is reached (done automatically
    /// after a sign-in, a `getSession()` or a `reload()` when `proactiveRefresh` is set). Does
    /// nothing after `finishAutoRefresh()`.
    public func startAutoRefresh() {
        guard autoRefresh == nil, !autoRefreshFinished else { return }
        nextID += 1
        let id = nextID
        let box = WeakSessionManager(self)
        autoRefresh = (id, Task { await Self.autoRefreshLoop(box, id: id) })
    }

    /// Stops the background refresh. A refresh already in flight is not cancelled: it runs on
    /// to its end (and stores its result), which this call does not wait for (see
    /// `finishAutoRefresh()`).
    public func stopAutoRefresh() {
        autoRefresh?.task.cancel()
        autoRefresh = nil
    }

    /// Stops the background refresh for good and returns once no refresh is in flight
    /// (background or on demand): its result is stored, or discarded after a sign-out. What a
    /// process does before it exits: a refresh cut off by the exit could leave the provider's
    /// rotated refresh token unsaved, and the user signed out. Nothing starts the background
    /// refresh again afterwards (`startAutoRefresh()`, sign-ins and calls with
    /// `proactiveRefresh` included); on-demand refreshes still run. The wait ends with the
    /// refresh, which its request timeouts and retry policy bound; it is not cancellable, since
    /// cancelling it would cut the refresh it waits for short.
    public func finishAutoRefresh() async {
        autoRefreshFinished = true
        stopAutoRefresh()
        // `refreshEnded` clears `inFlight` before the task returns; a refresh an on-demand
        // caller started meanwhile is waited for too.
        while let running = inFlight?.task {
            logger.info("stopping: waiting for the refresh in flight to store its result", metadata: ["category": "session"])
            _ = await running.result
        }
    }

    /// Replaces how the background refresh waits (internal, for tests: see `backgroundSleep`);
    /// set it before the loop starts.
    func setBackgroundSleep(_ sleep: @escaping @Sendable (Duration) async throws -> Void) {
        backgroundSleep = sleep
    }

    /// How long to wait before the next background refresh, and how; `nil` ends the loop.
    private func autoRefreshWait(failures: Int) async -> (delay: Duration, sleep: @Sendable (Duration) async throws -> Void)? {
        guard let session = try? await readStored(), session.refreshToken != nil,
            let delay = schedule.delay(for: session, now: clock.now(), failures: failures)
        else { return nil }
        return (delay, backgroundSleep)
    }

    private func backgroundRefresh() async throws(AuthError) {
        let stored = try await requireStored()
        // Stopped while reading the store: no new refresh is started.
        if Task.isCancelled { throw .cancelled }
        if schedule.isDue(stored, now: clock.now(), lastRefresh: lastRefresh) {
            _ = try await refresh(seen: stored, force: false)
        }
    }

    /// Forgets loop `id` once it ended by itself, so that the next sign-in starts a new one.
    private func autoRefreshEnded(id: Int) {
        if autoRefresh?.id == id { autoRefresh = nil }
    }

    private static func autoRefreshLoop(_ box: WeakSessionManager, id: Int) async {
        var failures = 0
        defer { Task { await box.manager?.autoRefreshEnded(id: id) } }
        while !Task.isCancelled {
            // A store that cannot be read ends the loop too: `readStored` published why.
            guard let wait = await box.manager?.autoRefreshWait(failures: failures) else { return }
            do { try await wait.sleep(wait.delay) } catch { return }
            guard let manager = box.manager else { return }
            do {
                try await manager.backgroundRefresh()
                failures = 0
            } catch .invalidGrant, .notSignedIn, .cancelled, .refreshTokenNarrowed {
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
