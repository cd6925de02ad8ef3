import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The common options of one command line (`VaultOptions`), read once from its arguments and
/// the environment (`$CREDVAULT_BACKEND`, `$CREDVAULT_PASSPHRASE_FILE`...): which backend and
/// vault, how to unlock it, what a new vault gets.
///
/// Reading them never fails and touches no file: an option is checked (a passphrase file read,
/// a passphrase asked for) only when the command uses it, so an option the command has no use
/// for never fails it (`keygen` with a bad `$CREDVAULT_KEY_CACHE`), and a command line with
/// several mistakes is reported for the first one the command meets, as each command's tests
/// expect. The checks keep their messages in the methods below.
package struct VaultRequest: Sendable {
    /// The backend's name: `--backend`, else `$CREDVAULT_BACKEND`, else the command's default
    /// (`file`; the credential helpers' is `auto`). Checked when it is resolved.
    package var backend: String
    /// The sealed-file vault: `--vault`, else the default path.
    package var vaultURL: URL
    /// What unlocks the vault.
    package var unlock: UnlockOptions
    /// `--custody` as given.
    package var custodyName: String?
    /// `--rollback-counter` and `--no-rollback-counter` as given.
    package var rollbackCounterFlags: (with: Bool, without: Bool)
    /// `--kdf` as given (default `moderate`).
    package var kdfName: String
    /// `--key-cache`, else `$CREDVAULT_KEY_CACHE`, as given.
    package var keyCacheText: String?
    /// Whether the Secret Service provider may ask a person (`--interactive`, or
    /// `CREDVAULT_INTERACTIVE=1`, for callers such as git's credential helper protocol).
    package var allowsInteraction: Bool
    /// The TPM to use: `--tpm-tcti`, else `$CREDVAULT_TPM_TCTI` (`nil`: the default device).
    package var tpmTCTI: String?
    /// Whether a TPM was named (`--tpm-tcti`, or a `$CREDVAULT_TPM_TCTI` that is not empty).
    package var namesTPM: Bool
    /// How to reach the fleet store (`--backend postgres`, `credvault fleet`).
    package var fleet: FleetRequest
    /// `--keyring-file-password-file`: the file holding libsecret's keyring file's password
    /// (`--backend libsecret-file`; read only when that backend is used).
    package var keyringFilePasswordFile: String?
    /// The Flatpak or Snap sandbox this process runs in (`Sandbox.detect`, the rule the
    /// resolver and the portal use: a `SNAP_NAME` outside a snap's cgroup is no sandbox), or `nil`.
    package var sandbox: Sandbox?

    /// Reads the common options from `arguments` and `environment`; `defaultBackend` is the
    /// command's (`Command.defaultBackend`).
    package init(
        _ arguments: ParsedArguments, defaultBackend: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        let options = arguments.options
        let flags = arguments.flags
        backend = options["backend"] ?? environment["CREDVAULT_BACKEND"] ?? defaultBackend
        vaultURL = options["vault"].map { URL(fileURLWithPath: $0) } ?? SealedFileStore.defaultURL
        unlock = UnlockOptions(
            passphraseFile: options["passphrase-file"] ?? environment["CREDVAULT_PASSPHRASE_FILE"], keyFile: options["key-file"],
            askPassphrase: flags.contains("ask-passphrase"), device: flags.contains("device"))
        custodyName = options["custody"]
        rollbackCounterFlags = (flags.contains("rollback-counter"), flags.contains("no-rollback-counter"))
        kdfName = options["kdf"] ?? "moderate"
        keyCacheText = options["key-cache"] ?? environment["CREDVAULT_KEY_CACHE"]
        allowsInteraction = flags.contains("interactive") || environment["CREDVAULT_INTERACTIVE"] == "1"
        tpmTCTI = options["tpm-tcti"] ?? environment["CREDVAULT_TPM_TCTI"]
        namesTPM = options["tpm-tcti"] != nil || !(environment["CREDVAULT_TPM_TCTI"] ?? "").isEmpty
        fleet = FleetRequest(arguments, environment: environment)
        keyringFilePasswordFile = options["keyring-file-password-file"]
        sandbox = Sandbox.detect(environment: environment)
    }

    /// Whether this process runs in a Flatpak or Snap sandbox (`sandbox`).
    package var insideSandbox: Bool { sandbox != nil }

    /// The custody a new sealed file gets without `--custody`: inside a sandbox the Secret
    /// portal's (the host-secret file there is a file the sandboxed app itself can read and
    /// copy, so it would protect nothing), else the host-secret file's.
    package var defaultCustody: DeviceCustody { insideSandbox ? .portal : .file }

    /// The custody `--custody` asks for (default `file`).
    package func custody() throws(UsageError) -> DeviceCustody {
        guard let custodyName else { return .file }
        guard let custody = DeviceCustody(name: custodyName) else { throw UsageError("--custody is file, keyring, tpm or portal") }
        return custody
    }

    /// Whether a new vault gets a rollback counter (`nil`: the custody's default).
    package func rollbackCounter() throws(UsageError) -> Bool? {
        switch rollbackCounterFlags {
        case (true, true): throw UsageError("give --rollback-counter or --no-rollback-counter, not both")
        case (true, false): return true
        case (false, true): return false
        case (false, false): return nil
        }
    }

    /// The Argon2id preset for a new passphrase vault.
    package func kdf() throws(UsageError) -> KDFParameters {
        switch kdfName {
        case "interactive": .interactive
        case "moderate": .moderate
        case "sensitive": .sensitive
        // Only for the project's own tests: no brute-force resistance at all.
        case "insecure-testing-only": .insecureTestingOnly
        default: throw UsageError("--kdf is interactive, moderate or sensitive")
        }
    }

    /// How long the kernel keyring keeps the vault's unlocked key (1 to 604800 seconds; 0
    /// forgets it now); `nil` when not asked (the default).
    package func keyCacheSeconds() throws(UsageError) -> Int? {
        guard let keyCacheText else { return nil }
        guard let seconds = Int(keyCacheText), (0...604_800).contains(seconds) else {
            throw UsageError("--key-cache is a number of seconds, 0 to 604800 (7 days)")
        }
        return seconds
    }
}
