import CredentialVault
import CredentialVaultTestSupport
import Foundation

@testable import CredentialVaultAuth

/// Stands in for the waits of a session manager's background refresh
/// (`SessionManager.setBackgroundSleep`): records each delay the loop asks for, lets the first
/// `passing` waits end at once after moving `clock` forward by their delay (virtual time: the
/// loop's schedule is checked without waiting for it), and holds every later wait until the
/// loop is stopped. A stopped wait arrives at `stopped`: a sign-out stops the loop first thing,
/// so "the sign-out has begun" is `await waits.stopped.reached(1)`.
final class BackgroundWaits: Sendable {
    /// Each delay the loop asked for, in order.
    let delays = Recorder<Duration>()
    /// Every wait arrives here when it begins.
    let began = Arrivals()
    /// Every wait ended by the loop's cancellation arrives here.
    let stopped = Arrivals()
    private let clock: ManualClock?
    private let passing: Int

    init(advancing clock: ManualClock? = nil, passing: Int = 0) {
        self.clock = clock
        self.passing = passing
    }

    /// The sleep to install with `setBackgroundSleep`.
    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] delay in
            delays.append(delay)
            let number = delays.count
            began.arrive()
            if number <= passing {
                clock?.advance(by: delay)
                return
            }
            do { try await Gate().wait() } catch {
                stopped.arrive()
                throw error
            }
        }
    }

    /// Installs these waits in `manager` (before its loop starts: before the sign-in).
    func install(in manager: SessionManager) async { await manager.setBackgroundSleep(sleep) }
}
