import CredentialVaultTestSupport
import Foundation
import Testing

/// The Flatpak sandbox harness (`scripts/sandbox/flatpak-sandbox.sh`): the real
/// xdg-desktop-portal with gnome-keyring's Secret backend, xdg-dbus-proxy with Flatpak's filter,
/// and bwrap with a `/.flatpak-info`. See docs/TESTING.md, "The Flatpak sandbox".
enum FlatpakSandbox {
    /// The harness: `flatpak-sandbox.sh [--app-id ID] [--home DIR] ... -- COMMAND`.
    static var script: URL { TestEnvironment.packageRoot.appendingPathComponent("scripts/sandbox/flatpak-sandbox.sh") }

    /// The harness's proof with secret-tool (`scripts/sandbox/check.sh`).
    static var checkScript: URL { TestEnvironment.packageRoot.appendingPathComponent("scripts/sandbox/check.sh") }

    /// The harness's status when bwrap cannot create the namespaces of a sandbox here.
    static let noNamespacesStatus: Int32 = 77

    /// Why the sandbox cannot run on this machine (a program missing, or bwrap refused the
    /// namespaces: the harness's own message), or nil when it can. Asked once, of the harness
    /// itself (`--probe`), so that a test skips for the reason the harness would fail.
    static let unavailableReason: String? = {
        for tool in ["bwrap", "xdg-dbus-proxy", "secret-tool", "busctl", "dbus-run-session", "gnome-keyring-daemon"]
        where !TestEnvironment.hasTool(tool) {
            return "needs \(tool): run scripts/install-deps.sh sandbox"
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/libexec/xdg-desktop-portal") else {
            return "needs xdg-desktop-portal: run scripts/install-deps.sh sandbox"
        }
        do {
            let probe = try CLIChild.run(script.path, ["--probe"], timeout: 60)
            if probe.status == 0 { return nil }
            let said = probe.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            return "the Flatpak sandbox cannot run here (status \(probe.status)): \(said)"
        } catch {
            return "the Flatpak sandbox harness could not be started: \(error)"
        }
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs only where the Flatpak sandbox can run (bwrap's namespaces, the portal, the proxy);
    /// elsewhere the test is skipped with the harness's own reason.
    static var flatpakSandbox: Self {
        .enabled(if: FlatpakSandbox.unavailableReason == nil, Comment(rawValue: FlatpakSandbox.unavailableReason ?? "the Flatpak sandbox runs here"))
    }
}
