import CredentialVaultTestSupport
import Foundation
import Testing

/// The lean `credvault` hands a move to the keyring or the TPM to
/// `credvault-full` (it links neither custodian), as it does `--custody keyring|tpm`.
extension LeanCLITests {
    @Test(arguments: ["keyring", "tpm"])
    func aCustodyMoveToAHeldCustodianBehavesAsInTheFullExecutable(custody: String) throws {
        let passphrase = dir.path("passphrase")
        try Data("lean custody move\n".utf8).write(to: passphrase)
        _ = chmod(passphrase.path, 0o600)
        let vault = dir.path("moves/\(custody).cvault").path
        let made = try run(BuiltProducts.credvault, ["init", "--vault", vault, "--passphrase-file", passphrase.path, "--kdf", "interactive"])
        #expect(made.status == 0, "\(made.stderr)")
        // No session bus and no TPM here: both fail, and must fail the same way (the full
        // executable's custodian says why), never with the lean one's "not configured".
        let arguments = ["custody", custody, "--vault", vault, "--passphrase-file", passphrase.path, "--tpm-tcti", "swtpm:path=\(dir.path("no-tpm").path)"]
        let lean = try run(BuiltProducts.credvault, arguments)
        let full = try run(BuiltProducts.full, arguments)
        #expect(lean.status == full.status)
        #expect(lean.stderr == full.stderr)
        if custody == "keyring" { #expect(!lean.stderr.contains("was not configured")) }
    }
}
