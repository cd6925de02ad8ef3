import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

/// Sharing libsecret's keyring file inside the Flatpak sandbox of
/// scripts/sandbox/flatpak-sandbox.sh (bwrap, /.flatpak-info, xdg-dbus-proxy letting only
/// org.freedesktop.portal.* through, xdg-desktop-portal 1.16, gnome-keyring): the real
/// `credvault-full --backend libsecret-file` and `secret-tool` in the same app's sandbox read
/// what the other stores, replaces and deletes; and the CLI's default backend there makes a
/// vault under portal custody (Tests/Scripts/libsecret-file-sandbox-chain.sh).
@Suite(
    .ownThread, .throwAwayBuses,
    .enabled(if: SandboxHarness.runs, "bwrap cannot create a Flatpak sandbox's namespaces here (scripts/sandbox/flatpak-sandbox.sh --probe)"))
struct LibsecretFileSandboxChainTests {
    @Test func aSandboxedAppAndSecretToolShareLibsecretsFileWithoutTheSecretService() throws {
        let chain = try SandboxChain.run("libsecret-file-sandbox-chain.sh")
        try #require(chain.status != 77, "the sandbox cannot run here: \(chain.stderr)")
        let expected: [(String, Int)] = [
            ("no-secret-service", 0), ("info-names-file-and-key", 0),
            ("ours-store", 0), ("file-in-app-data", 0), ("theirs-read-ours", 0),
            ("theirs-store", 0), ("ours-read-theirs", 0),
            ("ours-replace", 0), ("theirs-see-our-replacement", 0), ("theirs-replace", 0), ("ours-see-their-replacement", 0),
            ("theirs-clear", 0), ("ours-see-their-deletion", 1),  // not found
            ("ours-delete", 0), ("theirs-see-our-deletion", 1),  // secret-tool lookup: nothing matches
            ("lean-store", 0), ("lean-read-by-theirs", 0), ("not-in-gnome-keyring", 0),
            ("default-store", 0), ("default-vault-under-portal-custody", 0), ("default-second-run-reads", 0),
            ("outside-without-password-refused", 8),  // notAvailable: no portal secret outside a sandbox
        ]
        chain.expect(expected)
    }
}
