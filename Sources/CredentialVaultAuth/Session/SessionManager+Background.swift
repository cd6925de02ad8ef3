import CredentialVault
import Foundation

/// The background refresh: a loop that sleeps until the stored session is due, refreshes it,
/// and backs off after failures; it ends when there is nothing to refresh (signed out, refused,
/// no refresh token, the store unreadable: the state then says why).
extension SessionManager {
    /// Starts refreshing in the background when the margin is reached (done automatically
    /// after a sign-in, a `getSession()` or a `reload()` when `proactiveRefresh` is set).
    public func startAutoRefresh() {
        guard autoRefresh == nil else { return }
        nextID += 1
        let id = nextID
        let box = WeakSessionManager(self)
        autoRefresh = (id, Task { await Self.autoRefreshLoop(box, id: id) })
    }

    /// Stops the background refresh.
    public func stopAutoRefresh() {
        autoRefresh?.task.cancel()
        autoRefresh = nil
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
