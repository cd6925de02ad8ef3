import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

/// The async API never blocks Swift's cooperative pool: 64 async saves against a SIGSTOPped
/// keyring daemon all start and wait while a heartbeat on the pool keeps beating, and cancelled,
/// they all answer `cancelled` while the daemon is still stopped. Run in `secret-service-probe`
/// on a throw-away bus of its own, so that the stopped daemon is no other test's. Outcomes only:
/// the heartbeat's lag and the cancellation latency are credvault-bench's figures.
@Suite(.ownThread, .throwAwayBuses)
struct AsyncProofTests {
    /// A deadline no wait reaches before the probe's ceiling (`CLIChild.run`'s): a save
    /// waiting on the stopped daemon can only end by its cancellation.
    static let unreachableDeadline = 3_600_000

    @Test func savesWaitingOnAStoppedDaemonLeaveThePoolRunningAndEndWhenCancelled() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--unlocked", timeoutMilliseconds: Self.unreachableDeadline,
                ["save:probe-async:warm", "async-saves:64:finish:distinct", "sigstop", "async-saves:64:cancel:distinct", "sigcont",
                 "async-load:probe-async:warm"])
            #expect(steps[0].outcome == "ok" && steps[2].outcome == "ok" && steps[4].outcome == "ok", "\(steps)")
            let answering = try #require(SavesOutcome(steps[1]), "\(steps)")
            #expect(answering.ok == 64, "\(answering)")
            // The daemon is continued only by the step after: every save ended while it was stopped.
            let stopped = try #require(SavesOutcome(steps[3]), "\(steps)")
            #expect(stopped.started == 64 && stopped.unfinished == 64, "every save waited on the stopped daemon: \(stopped)")
            #expect(stopped.beat, "the heartbeat kept beating while 64 saves waited: \(stopped)")
            #expect(stopped.cancelled == 64, "every save answered cancelled, none timedOut: \(stopped)")
            #expect(steps[5].outcome.hasPrefix("value:"), "the store works again once the daemon runs: \(steps)")
        }
    }

    /// The async API keeps the synchronous deadline: a stopped daemon gives `timedOut` (not
    /// `cancelled`: nobody cancelled) while it is still stopped, and the store works again
    /// afterwards. The deadline is 1 s on the stopped daemon (the probe's ceiling is many times
    /// that), a minute while it runs (which a loaded machine meets).
    @Test func stoppedDaemonTimesOutAtTheDeadlineThroughTheAsyncAPI() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--unlocked", timeoutMilliseconds: 60_000,
                ["async-save:svc:acct", "set-timeout:1000", "sigstop", "async-load:svc:acct", "async-status", "sigcont", "set-timeout:60000",
                 "async-take:svc:acct", "async-load:svc:acct"])
            #expect(steps.map(\.outcome) == [
                "ok", "ok", "ok", "error:timedOut", "error:timedOut", "ok", "ok",
                "value:" + Data("probe-secret".utf8).map { String(format: "%02x", $0) }.joined(), "nil",
            ], "\(steps)")
        }
    }

    /// A locked keyring through the async API: `locked`, never "not found", and the unlock
    /// (which cannot show a prompt here: no display) fails promptly with `locked`.
    @Test func lockedKeyringIsReportedAsLockedThroughTheAsyncAPI() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--locked", ["async-status", "async-load:svc:acct", "async-save:svc:acct", "async-take:svc:acct", "async-unlock"])
            #expect(steps.map(\.outcome) == ["locked", "error:locked", "error:locked", "error:locked", "error:locked"], "\(steps)")
        }
    }
}
