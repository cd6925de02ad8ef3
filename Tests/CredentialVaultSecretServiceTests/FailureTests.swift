import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

/// Never hang, never lie: each scenario runs `secret-service-probe` on a throw-away bus of its
/// own (so the test keyring of the other tests keeps working).
@Suite(.ownThread, .throwAwayBuses)
struct FailureTests {
    @Test func lockedKeyringIsReportedAsLockedNeverAsMissing() throws {
        let steps = try runProbe(
            busMode: "--locked",
            ["status", "load:svc:acct", "take:svc:acct", "save:svc:acct", "list", "delete:svc:acct",
             "save-ephemeral:svc:nonce", "unlock", "status"])
        let outcomes = Dictionary(steps.map { ($0.step, $0.outcome) }, uniquingKeysWith: { first, _ in first })
        #expect(steps.first?.outcome == "locked", "\(steps)")
        for step in ["load:svc:acct", "take:svc:acct", "save:svc:acct", "list", "delete:svc:acct", "save-ephemeral:svc:nonce"] {
            #expect(outcomes[step] == "error:locked", "\(step): \(steps)")
        }
        // No display: the unlock prompt cannot be shown, so the explicit unlock fails, promptly.
        let unlock = try #require(steps.first { $0.step == "unlock" })
        #expect(unlock.outcome == "error:locked", "\(steps)")
        #expect(steps.last?.outcome == "locked")
    }

    /// A collection locked while it holds the key's items: the backend learns the lock state
    /// from the search's list of locked items (and asks the collection when nothing matches).
    @Test func collectionLockedWithItemsIsReportedAsLocked() throws {
        let steps = try runProbe(
            busMode: "--unlocked",
            ["save:svc:acct", "save-ephemeral:svc:nonce", "lock-default", "status", "load:svc:acct", "load:svc:missing",
             "take:svc:acct", "save:svc:acct", "save:svc:new", "save-ephemeral:svc:other", "delete:svc:acct", "list",
             "load:svc:nonce"])
        #expect(steps.map(\.outcome) == [
            "ok", "ok", "ok", "locked", "error:locked", "error:locked", "error:locked", "error:locked", "error:locked",
            "error:locked", "error:locked", "error:locked",
            // An ephemeral credential lives in the session collection, which stays unlocked.
            "value:" + Data("probe-secret".utf8).map { String(format: "%02x", $0) }.joined(),
        ], "\(steps)")
    }

    /// No provider: `notAvailable` without waiting for the deadline (30 s here: an answer
    /// before it is the proof), in words that name no particular provider to install.
    @Test func noSecretServiceProviderIsNotAvailableWithoutWaitingForTheDeadline() throws {
        let deadline = 30_000
        let steps = try runProbe(
            busMode: "--no-provider", timeoutMilliseconds: deadline, ["status", "load:svc:acct", "save:svc:acct"])
        for step in steps {
            #expect(step.outcome == "error:notAvailable", "\(step)")
            #expect(step.milliseconds < deadline, "\(step)")
            #expect(step.detail?.contains("start one (gnome-keyring, KWallet, or KeePassXC") == true, "\(step)")
        }
    }

    @Test func noSessionBusIsNotAvailableWithoutWaitingForTheDeadline() throws {
        let deadline = 30_000
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("cv-nobus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let scenarios: [[String: String?]] = [
            ["DBUS_SESSION_BUS_ADDRESS": nil, "XDG_RUNTIME_DIR": empty.path, "DISPLAY": nil, "WAYLAND_DISPLAY": nil],
            ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(empty.path)/no-such-socket", "DISPLAY": nil],
        ]
        for environment in scenarios {
            let steps = try runProbe(
                busMode: nil, timeoutMilliseconds: deadline, ["status", "load:svc:acct"], environment: environment)
            for step in steps {
                #expect(step.outcome == "error:notAvailable", "\(step)")
                #expect(step.milliseconds < deadline, "\(step)")
            }
        }
    }

    @Test func stoppedDaemonTimesOutAtTheDeadlineAndRecovers() throws {
        let deadline = 1000
        let steps = try runProbe(
            busMode: "--unlocked", timeoutMilliseconds: deadline,
            ["save:svc:acct", "sigstop", "load:svc:acct", "save:svc:other", "status", "sigcont", "load:svc:acct"])
        #expect(steps.map(\.outcome) == [
            "ok", "ok", "error:timedOut", "error:timedOut", "error:timedOut", "ok",
            "value:" + Data("probe-secret".utf8).map { String(format: "%02x", $0) }.joined(),
        ], "\(steps)")
        // Also when the daemon is already stopped at the first connection.
        let first = try runProbe(
            busMode: "--unlocked", timeoutMilliseconds: deadline, ["sigstop", "status", "sigcont", "status"])
        #expect(first.map(\.outcome) == ["ok", "error:timedOut", "ok", "unlocked"], "\(first)")
        // Never before the deadline (it is never early); the upper bound only says it ended.
        for step in steps + first where step.outcome == "error:timedOut" {
            #expect(step.milliseconds >= deadline - 50 && step.milliseconds < deadline * 20, "\(step)")
        }
    }
}
