import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

/// `BackendResolver`'s automatic choice against a real gnome-keyring in each state, on
/// throw-away buses (`secret-service-probe`): locked is reported, never replaced by the sealed
/// file unless asked; only an unavailable service falls back.
@Suite(.ownThread, .throwAwayBuses)
struct ResolverKeyringStateTests {
    @Test func aLockedKeyringIsReportedAsLocked() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--locked",
                ["resolve:report", "resolve-async:report", "open:report", "open-async:report", "resolve:file", "open-async:file",
                 "resolve:wait700", "resolve-async:wait700", "open-async:wait300"])
            #expect(steps.map(\.outcome) == [
                "secret-service-locked", "secret-service-locked", "error:locked", "error:locked", "file", "opened:file",
                "secret-service-locked", "secret-service-locked", "error:locked",
            ], "\(steps)")
        }
    }

    /// A keyring that does not answer in time (a stopped or busy daemon) is not an unavailable
    /// one: the automatic choice throws `timedOut` and never falls back to the sealed file (the
    /// first version did, splitting an app's tokens between two stores).
    @Test func aKeyringThatDoesNotAnswerIsNeverReplacedByTheSealedFile() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--locked", timeoutMilliseconds: 60_000,
                ["resolve:report", "set-timeout:500", "sigstop", "resolve:report", "resolve-async:report", "open-async:report",
                 "resolve-async:wait1500", "sigcont", "set-timeout:60000", "resolve:report"])
            #expect(steps.map(\.outcome) == [
                "secret-service-locked", "ok", "ok", "error:timedOut", "error:timedOut", "error:timedOut", "error:timedOut", "ok", "ok",
                "secret-service-locked",
            ], "\(steps)")
        }
    }

    /// No wait when unlocked: a wait for an hour would pass the probe's ceiling.
    @Test func anUnlockedKeyringIsChosenAtOnceWhateverThePolicy() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--unlocked", timeoutMilliseconds: 60_000, ["resolve:report", "resolve-async:wait3600000", "open:file", "open-async:report"])
            #expect(steps.map(\.outcome) == ["secret-service", "secret-service", "opened:secret-service", "opened:secret-service"], "\(steps)")
        }
    }

    /// No wait when unavailable: a wait for an hour would pass the probe's ceiling.
    @Test func withoutAProviderTheSealedFileIsChosen() async throws {
        try await offThePool {
            let steps = try runProbe(
                busMode: "--no-provider", ["resolve:report", "resolve-async:report", "resolve:wait3600000", "open-async:report"])
            #expect(steps.map(\.outcome) == ["file", "file", "file", "opened:file"], "\(steps)")
        }
    }
}
