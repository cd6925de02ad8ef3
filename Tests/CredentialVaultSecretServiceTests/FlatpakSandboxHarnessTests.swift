import CredentialVaultTestSupport
import Foundation
import Testing

/// The Flatpak sandbox harness gives a real sandbox: libsecret's own portal path (secret-tool)
/// works inside it, the app's secrets land in its `~/.var/app/ID/data/keyrings/default.keyring`,
/// each app id gets its own portal key, the filtered bus hides `org.freedesktop.secrets`; and a
/// Swift-built executable runs inside it with its libraries.
@Suite(.ownThread, .throwAwayBuses, .flatpakSandbox) struct FlatpakSandboxHarnessTests {
    @Test func secretToolInsideTakesThePortalPathAndEachAppHasItsOwnKey() throws {
        let outcome = try CLIChild.run(FlatpakSandbox.checkScript.path, [], timeout: 300)
        let report = "\(outcome.stdoutText)\n\(outcome.stderr)"
        // 77 here means the harness refused after the probe said yes: a failure, never a pass.
        #expect(outcome.status == 0, "check.sh ended with \(outcome.status):\n\(report)")
        let lines = outcome.stdoutText.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("not ok") }.isEmpty, "\(report)")
        #expect(lines.filter { $0.hasPrefix("ok - ") }.count == 13, "\(report)")
    }

    @Test func aSwiftBuiltExecutableRunsInsideWithItsLibraries() throws {
        let outcome = try CLIChild.run(
            TestEnvironment.withKeyringScript.path,
            ["--no-activation", "--", FlatpakSandbox.script.path, "--", TestEnvironment.credvault.path, "--help"], timeout: 120)
        #expect(outcome.status == 0, "\(outcome.stdoutText)\n\(outcome.stderr)")
        #expect(outcome.stdoutText.contains("usage: credvault"), "\(outcome.stdoutText)\n\(outcome.stderr)")
    }
}
