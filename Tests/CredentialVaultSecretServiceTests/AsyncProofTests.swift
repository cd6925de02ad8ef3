import CredentialVault
import Foundation
import Testing

/// The async API never blocks Swift's cooperative pool (2 threads on this 2-core machine): a
/// heartbeat task on the pool stays on time while 64 async saves run, and while they hang on a
/// SIGSTOPped keyring daemon, and cancelling those saves answers them all at once. Measured
/// in `secret-service-probe`, a process of its own on a throw-away bus, so that nothing else
/// of the test runner shares its pool and the stopped daemon is no other test's.
@Suite(.throwAwayBuses, .serialized)
struct AsyncProofTests {
    /// The measurement: warm up (connect), 64 saves against a daemon that answers, then 64
    /// saves against the stopped daemon, cancelled after 500 ms (the deadline is 5 s, so they
    /// are all still waiting, four in D-Bus calls and the rest queued).
    private static let steps = [
        "save:probe-async:warm", "async-saves:64:0:distinct", "sigstop", "async-saves:64:500:distinct", "sigcont",
        "async-load:probe-async:warm",
    ]

    @Test func heartbeatStaysOnTimeAndCancellationIsPrompt() throws {
        var attempts: [String] = []
        for attempt in 1...HeartbeatBounds.attempts {
            let steps = try runProbe(busMode: "--unlocked", timeoutMilliseconds: 5000, Self.steps)
            let answering = try #require(HeartbeatRun(steps[1]), "\(steps)")
            let stopped = try #require(HeartbeatRun(steps[3]), "\(steps)")
            // What the saves answered is no matter of timing: checked on every attempt.
            #expect(steps[0].outcome == "ok" && steps[2].outcome == "ok" && steps[4].outcome == "ok", "\(steps)")
            #expect(answering.ok == 64, "\(answering)")
            #expect(stopped.cancelled == 64, "every save answers cancelled, none timedOut: \(stopped)")
            #expect(steps[5].outcome.hasPrefix("value:"), "the store works again once the daemon runs: \(steps)")
            let cancel = try #require(stopped.cancelLatency, "\(stopped)")
            attempts.append("attempt \(attempt): \(answering); \(stopped)")
            if answering.lag < HeartbeatBounds.lag && stopped.lag < HeartbeatBounds.lag && cancel < HeartbeatBounds.cancel {
                print("AsyncProofTests: " + attempts.joined(separator: " | "))
                return
            }
        }
        Issue.record("heartbeat lag or cancellation over its bound in every attempt:\n\(attempts.joined(separator: "\n"))")
    }

    /// The async API keeps the synchronous deadline: a stopped daemon gives `timedOut` at it
    /// (not `cancelled`: nobody cancelled), and the store works again afterwards.
    @Test func stoppedDaemonTimesOutAtTheDeadlineThroughTheAsyncAPI() throws {
        let deadline = 1000
        let steps = try runProbe(
            busMode: "--unlocked", timeoutMilliseconds: deadline,
            ["async-save:svc:acct", "sigstop", "async-load:svc:acct", "async-status", "sigcont", "async-take:svc:acct",
             "async-load:svc:acct"])
        #expect(steps.map(\.outcome) == [
            "ok", "ok", "error:timedOut", "error:timedOut", "ok",
            "value:" + Data("probe-secret".utf8).map { String(format: "%02x", $0) }.joined(), "nil",
        ], "\(steps)")
        for step in steps where step.outcome == "error:timedOut" {
            #expect(step.milliseconds >= deadline - 50 && step.milliseconds <= deadline + 500, "\(step)")
        }
    }

    /// A locked keyring through the async API: `locked`, never "not found", and the unlock
    /// (which cannot show a prompt here: no display) fails promptly with `locked`.
    @Test func lockedKeyringIsReportedAsLockedThroughTheAsyncAPI() throws {
        let steps = try runProbe(
            busMode: "--locked", ["async-status", "async-load:svc:acct", "async-save:svc:acct", "async-take:svc:acct", "async-unlock"])
        #expect(steps.map(\.outcome) == ["locked", "error:locked", "error:locked", "error:locked", "error:locked"], "\(steps)")
    }
}
