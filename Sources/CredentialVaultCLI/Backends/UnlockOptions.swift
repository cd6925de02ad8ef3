import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the command line says unlocks the vault: at most one of `--passphrase-file` (or
/// `$CREDVAULT_PASSPHRASE_FILE`), `--key-file`, `--ask-passphrase` and `--device`; none means
/// the device key. Secrets come only from files or a no-echo prompt, never from arguments, and
/// only when `explicitKey` is called: a vault opened with a cached key reads and asks nothing.
package struct UnlockOptions: Sendable {
    /// The passphrase file's path.
    package var passphraseFile: String?
    /// The key file's path.
    package var keyFile: String?
    /// Whether to prompt for the passphrase.
    package var askPassphrase: Bool
    /// Whether `--device` was given (the device key, which is also the default).
    package var device: Bool

    /// Creates the options as given.
    package init(passphraseFile: String?, keyFile: String?, askPassphrase: Bool, device: Bool) {
        self.passphraseFile = passphraseFile
        self.keyFile = keyFile
        self.askPassphrase = askPassphrase
        self.device = device
    }

    /// Throws the usage error for more than one key option, without reading or prompting.
    package func checkOne() throws(UsageError) {
        let given = [passphraseFile != nil, keyFile != nil, askPassphrase, device]
        guard given.filter({ $0 }).count <= 1 else {
            throw UsageError("give one of --passphrase-file, --key-file, --ask-passphrase, --device")
        }
    }

    /// The unlock key asked for, read from its file or prompted for (twice with `confirmNew`,
    /// for a new vault); `nil` when none was given (the device key then).
    package func explicitKey(confirmNew: Bool = false) throws -> VaultSecret? {
        try checkOne()
        if let passphraseFile { return try SecretReader.passphrase(fromFile: passphraseFile) }
        if let keyFile { return .keyFile(URL(fileURLWithPath: keyFile)) }
        if askPassphrase { return try Prompt.passphrase(confirm: confirmNew) }
        if device { return .device }
        return nil
    }
}
