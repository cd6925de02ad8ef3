import CredentialVault
import Foundation
import Testing

/// `BackendResolver`'s automatic choice against a real gnome-keyring in each state, on
/// throw-away buses (`secret-service-probe`): locked is reported, never replaced by the sealed
/// file unless asked; only an unavailable service falls back.
@Suite(.throwAwayBuses)
struct ResolverKeyringStateTests {
    @Test func aLockedKeyringIsReportedAsLocked() throws {
        let steps = try runProbe(
            busMode: "--locked",
            ["resolve:report", "resolve-async:report", "open:report", "open-async:report", "resolve:file", "open-async:file",
             "resolve:wait700", "resolve-async:wait700", "open-async:wait300"])
        #expect(steps.map(\.outcome) == [
            "secret-service-locked", "secret-service-locked", "error:locked", "error:locked", "file", "opened:file",
            "secret-service-locked", "secret-service-locked", "error:locked",
        ], "\(steps)")
        for step in steps where step.step.hasSuffix(":wait700") {
            #expect(step.milliseconds >= 700 && step.milliseconds < 3000, "the wait ends at its timeout: \(step)")
        }
    }

    /// A keyring that does not answer in time (a stopped or busy daemon) is not an unavailable
    /// one: the automatic choice throws `timedOut` and never falls back to the sealed file (the
    /// first version did, splitting an app's tokens between two stores).
    @Test func aKeyringThatDoesNotAnswerIsNeverReplacedByTheSealedFile() throws {
        let steps = try runProbe(
            busMode: "--locked", timeoutMilliseconds: 500,
            ["resolve:report", "sigstop", "resolve:report", "resolve-async:report", "open-async:report", "resolve-async:wait1500", "sigcont",
             "resolve:report"])
        #expect(steps.map(\.outcome) == [
            "secret-service-locked", "ok", "error:timedOut", "error:timedOut", "error:timedOut", "error:timedOut", "ok", "secret-service-locked",
        ], "\(steps)")
    }

    @Test func anUnlockedKeyringIsChosenAtOnceWhateverThePolicy() throws {
        let steps = try runProbe(
            busMode: "--unlocked", ["resolve:report", "resolve-async:wait5000", "open:file", "open-async:report"])
        #expect(steps.map(\.outcome) == ["secret-service", "secret-service", "opened:secret-service", "opened:secret-service"], "\(steps)")
        #expect(steps[1].milliseconds < 2000, "no wait when unlocked: \(steps[1])")
    }

    @Test func withoutAProviderTheSealedFileIsChosen() throws {
        let steps = try runProbe(
            busMode: "--no-provider", ["resolve:report", "resolve-async:report", "resolve:wait5000", "open-async:report"])
        #expect(steps.map(\.outcome) == ["file", "file", "file", "opened:file"], "\(steps)")
        #expect(steps[2].milliseconds < 2000, "no wait when unavailable: \(steps[2])")
    }
}
