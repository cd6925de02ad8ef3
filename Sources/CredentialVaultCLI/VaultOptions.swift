import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The options every command shares: which backend and vault, and how to unlock it.
/// Secrets come only from files, stdin or a no-echo prompt, never from arguments.
package enum VaultOptions {
    package static let flags: Set<String> = [
        "device", "ask-passphrase", "json", "rollback-counter", "no-rollback-counter", "interactive", "insecure-transport",
        "fleet-device-key",
    ]
    package static let options: Set<String> = [
        "vault", "passphrase-file", "key-file", "kdf", "backend", "custody", "tpm-tcti", "key-cache", "postgres", "fleet-host",
        "fleet-schema", "fleet-key-file", "fleet-passphrase-file", "postgres-password-file", "fleet-private-key",
    ]

    /// The common options' help, for commands whose default backend is `file`.
    package static let help = help(defaultBackend: VaultBackend.file.rawValue)

    /// The common options' help, naming `defaultBackend` as the default (the credential
    /// helpers' is `auto`).
    package static func help(defaultBackend: String) -> String {
        commonOptionsHelp.replacing("(default: file, or", with: "(default: \(defaultBackend), or")
    }

    private static let commonOptionsHelp = """
        common options:
          --backend file|secret-service|memory|auto|postgres
                                     storage backend (default: file, or $CREDVAULT_BACKEND); auto is
                                     the Secret Service when it is reachable, else the file; a locked
                                     keyring is reported (exit code 10), never replaced by the file
          --interactive              let the Secret Service provider ask you when an operation needs it
                                     (its unlock dialog, KeePassXC's access confirmation); without it
                                     such an operation fails with exit code 14 ($CREDVAULT_INTERACTIVE=1
                                     does the same)
          --postgres URL             the fleet store's libpq connection string or URL (with --backend
                                     postgres; default $CREDVAULT_POSTGRES), unlocked with this host's
                                     --key-file or --passphrase-file (see credvault fleet --help); a
                                     password in it is refused (every local user can read a command
                                     line): use a passfile, $CREDVAULT_POSTGRES or:
          --postgres-password-file PATH
                                     the PostgreSQL role's password (one trailing newline is ignored)
          --insecure-transport       accept a TCP connection weaker than sslmode=verify-full (the
                                     default over TCP; a Unix socket needs none), with a warning
          --fleet-host NAME          this host's name in the fleet store (default $CREDVAULT_FLEET_HOST,
                                     else the machine's host name)
          --fleet-schema NAME        the fleet store's schema (default $CREDVAULT_FLEET_SCHEMA, else credvault)
          --fleet-private-key PATH   this host's private key file (credvault keygen): the host is
                                     enrolled by its public key, and rotations re-key it
                                     ($CREDVAULT_FLEET_PRIVATE_KEY does the same)
          --fleet-device-key         this host's key pair is this machine's (its host secret and
                                     machine id; with --custody keyring|tpm, that custodian's secret
                                     too): enrolled by its public key, never in a file of its own
          --fleet-key-file PATH, --fleet-passphrase-file PATH
                                     this host's fleet key when another backend of the same command
                                     (migrate) takes --key-file or --passphrase-file
                                     ($CREDVAULT_FLEET_KEY_FILE does the same)
          --vault PATH               sealed-file vault (default: $XDG_DATA_HOME/credential-vault/default.cvault)
          --passphrase-file PATH     unlock with the passphrase in PATH (one trailing newline is ignored);
                                     $CREDVAULT_PASSPHRASE_FILE does the same
          --key-file PATH            unlock with a key file (see credvault keygen)
          --ask-passphrase           prompt for the passphrase without echo (needs a terminal)
          --device                   unlock with this machine's device key (the default)
          --kdf interactive|moderate|sensitive
                                     Argon2id cost when a passphrase vault is created (default: moderate)
          --custody file|keyring|tpm who keeps the device secret and rollback counter of a vault being
                                     created (default: file, the host-secret file, the weakest); an
                                     existing vault uses the custodian its header names
          --rollback-counter, --no-rollback-counter
                                     whether a new vault gets a rollback counter (default: with
                                     keyring and tpm custody); an older copy is then refused (exit 13)
          --tpm-tcti TCTI            the TPM to use (default: $CREDVAULT_TPM_TCTI, else device:/dev/tpmrm0)
          --key-cache SECONDS        keep this passphrase or key-file vault's unlocked key in the kernel
                                     keyring for SECONDS (this user only, expired by the kernel), so
                                     later commands need no passphrase and no Argon2id; 0 forgets it
                                     now ($CREDVAULT_KEY_CACHE does the same; off by default)
          --json                     machine-readable output
        """

    /// The vault file.
    package static func vaultURL(_ args: ParsedArguments) -> URL {
        args.options["vault"].map { URL(fileURLWithPath: $0) } ?? SealedFileStore.defaultURL
    }

    /// The unlock key the options ask for; `nil` when none was given (the device key then).
    package static func explicitKey(_ args: ParsedArguments, confirmNew: Bool = false) throws -> VaultSecret? {
        try checkOneKeyOption(args)
        var chosen: [VaultSecret] = []
        if let path = args.options["passphrase-file"] ?? ProcessInfo.processInfo.environment["CREDVAULT_PASSPHRASE_FILE"] {
            chosen.append(try passphrase(fromFile: path))
        }
        if let path = args.options["key-file"] { chosen.append(.keyFile(URL(fileURLWithPath: path))) }
        if args.flags.contains("ask-passphrase") { chosen.append(try Prompt.passphrase(confirm: confirmNew)) }
        if args.flags.contains("device") { chosen.append(.device) }
        return chosen.first
    }

    /// Throws the usage error for more than one key option, without reading or prompting.
    package static func checkOneKeyOption(_ args: ParsedArguments) throws {
        let given = [
            args.options["passphrase-file"] ?? ProcessInfo.processInfo.environment["CREDVAULT_PASSPHRASE_FILE"] != nil,
            args.options["key-file"] != nil, args.flags.contains("ask-passphrase"), args.flags.contains("device"),
        ]
        guard given.filter({ $0 }).count <= 1 else {
            throw UsageError("give one of --passphrase-file, --key-file, --ask-passphrase, --device")
        }
    }

    /// Reads a passphrase file: the bytes as they are, minus one trailing newline.
    package static func passphrase(fromFile path: String) throws -> VaultSecret {
        try SecretReader.passphrase(fromFile: path)
    }

    /// The custody `--custody` asks for (default `file`).
    package static func custody(_ args: ParsedArguments) throws -> DeviceCustody {
        guard let name = args.options["custody"] else { return .file }
        guard let custody = DeviceCustody(name: name) else { throw UsageError("--custody is file, keyring or tpm") }
        return custody
    }

    /// Whether a new vault gets a rollback counter (`nil`: the custody's default).
    package static func rollbackCounter(_ args: ParsedArguments) throws -> Bool? {
        switch (args.flags.contains("rollback-counter"), args.flags.contains("no-rollback-counter")) {
        case (true, true): throw UsageError("give --rollback-counter or --no-rollback-counter, not both")
        case (true, false): return true
        case (false, true): return false
        case (false, false): return nil
        }
    }

    /// The sealed-file configuration: the custody and counter a new vault gets, the
    /// custodians this executable offers (the keyring's and the TPM's only in `credvault-full`),
    /// and the lock wait (the default, unless a test sets `TestLockWait.variable`).
    package static func configuration(_ args: ParsedArguments) throws -> SealedFileConfiguration {
        var configuration = SealedFileConfiguration()
        if let wait = try TestLockWait.current() { configuration.lockTimeout = wait }
        configuration.custody = try custody(args)
        configuration.rollbackCounter = try rollbackCounter(args)
        if let backends = installed.withLock({ $0 }) { configuration.custodians = try backends.custodians(args) }
        return configuration
    }

    /// What in this command line needs `credvault-full`'s custodians: a `--custody` other than
    /// `file`, an existing vault whose header names one, or any vault on a machine whose TPM
    /// this user reaches (which may hold the vault's counter since a move to TPM custody that
    /// the copy at the path predates: only `credvault-full` can ask it); `nil` when nothing
    /// does. Reads only the vault's header.
    ///
    /// The TPM case does not depend on what is at the vault's path now: the command opens the
    /// vault later, and whoever writes the user's files can have nothing (or something
    /// unreadable) there when this looks and the pre-move copy there when the command opens it.
    package static func custodyNeedingFullExecutable(_ args: ParsedArguments) -> String? {
        if let name = args.options["custody"], name != DeviceCustody.file.name { return "--custody \(name)" }
        if let custody = LockedVault.custody(at: vaultURL(args)), custody != .file { return "a vault under \(custody.name) custody" }
        if tpmIsReachable(args) { return "a vault on a machine with a TPM (which may hold its rollback counter)" }
        return nil
    }

    /// Whether `credvault-full` would reach a TPM: one named (`--tpm-tcti`,
    /// `$CREDVAULT_TPM_TCTI`), or the default device open to this user for reading and writing.
    static func tpmIsReachable(_ args: ParsedArguments) -> Bool {
        if args.options["tpm-tcti"] != nil { return true }
        if let named = ProcessInfo.processInfo.environment["CREDVAULT_TPM_TCTI"], !named.isEmpty { return true }
        return access("/dev/tpmrm0", R_OK | W_OK) == 0
    }

    /// The Argon2id preset for a new passphrase vault.
    package static func kdf(_ args: ParsedArguments) throws -> KDFParameters {
        switch args.options["kdf"] ?? "moderate" {
        case "interactive": .interactive
        case "moderate": .moderate
        case "sensitive": .sensitive
        // Only for the project's own tests: no brute-force resistance at all.
        case "insecure-testing-only": .insecureTestingOnly
        default: throw UsageError("--kdf is interactive, moderate or sensitive")
        }
    }

    /// Whether the Secret Service provider may ask a person (`--interactive`, or
    /// `CREDVAULT_INTERACTIVE=1`, for callers such as git's credential helper protocol).
    package static func allowsInteraction(_ args: ParsedArguments) -> Bool {
        args.flags.contains("interactive") || ProcessInfo.processInfo.environment["CREDVAULT_INTERACTIVE"] == "1"
    }

    /// The backend name from `--backend` or `$CREDVAULT_BACKEND` (default `file`).
    package static func backendName(_ args: ParsedArguments) -> String {
        backendName(args, default: VaultBackend.file.rawValue)
    }

    /// The backend name from `--backend` or `$CREDVAULT_BACKEND`, else `fallback` (the
    /// credential helpers' is `auto`, the choice for desktop users).
    package static func backendName(_ args: ParsedArguments, default fallback: String) -> String {
        args.options["backend"] ?? ProcessInfo.processInfo.environment["CREDVAULT_BACKEND"] ?? fallback
    }

    /// Opens the chosen store. With `create`, a missing vault is created; without, `nil` is
    /// returned for a missing vault (read commands then see an empty store).
    package static func openStore(_ args: ParsedArguments, create: Bool) throws -> (any TokenStorageBackend)? {
        try openStore(named: backendName(args), args, create: create)
    }

    /// Opens the backend called `name` (`file`, `secret-service`, `memory` or `auto`).
    /// Throws `LockedKeyringError` when `auto` found the keyring locked.
    package static func openStore(named name: String, _ args: ParsedArguments, create: Bool) throws -> (any TokenStorageBackend)? {
        let resolution = try resolve(name, args)
        if resolution.isLocked { throw LockedKeyringError(message: resolution.reason) }
        switch resolution.kind {
        case .file: return try openSealedFile(args, create: create)
        case .secretService: return try extendedBackends().openSecretService(allowingInteraction: allowsInteraction(args))
        case .memory: return InMemoryStore()
        case .postgres: return try extendedBackends().openPostgres(args)
        }
    }

    /// What backend `name` means here. `file` and `memory` are taken as they are; `auto` (which
    /// asks the Secret Service, never prompting, and falls back to the sealed file when it is
    /// unavailable, reporting a locked keyring with `isLocked`) and
    /// `secret-service` are decided by the installed `ExtendedBackends`. An explicit name was
    /// already chosen over $CREDVAULT_BACKEND, so it is not consulted again.
    package static func resolve(_ name: String, _ args: ParsedArguments) throws -> BackendResolution {
        switch name {
        case VaultBackend.file.rawValue: return BackendResolution(kind: .file, reason: "chosen explicitly")
        case VaultBackend.memory.rawValue: return BackendResolution(kind: .memory, reason: "chosen explicitly")
        case VaultBackend.postgres.rawValue: return BackendResolution(kind: .postgres, reason: "chosen explicitly")
        case _ where needsFullExecutable(name): return try extendedBackends().resolve(name, vaultURL: vaultURL(args))
        default: throw UsageError("unknown backend '\(name)' (file, secret-service, memory, auto, postgres)")
        }
    }

    /// Whether the backend called `name` needs the Secret Service (which only `credvault-full`
    /// links): `secret-service`, and `auto` (or `automatic`), which asks it.
    package static func needsFullExecutable(_ name: String) -> Bool {
        ["secret-service", "auto", "automatic", "postgres"].contains(name)
    }

    /// `error` as the one line on stderr: in the fleet store's words when the command works on
    /// the fleet store (`backend` postgres), else the common wording.
    package static func describe(_ error: CredentialVaultError, backend: String?) -> String {
        guard backend == VaultBackend.postgres.rawValue, let backends = installed.withLock({ $0 }),
            let text = backends.describeFleetError(error)
        else { return error.description }
        return text
    }

    /// Installs the Secret Service and the automatic choice (`credvault-full` does, first thing).
    package static func install(_ backends: any ExtendedBackends) {
        installed.withLock { $0 = backends }
    }

    private static let installed = Mutex<(any ExtendedBackends)?>(nil)

    static func extendedBackends() throws -> any ExtendedBackends {
        guard let backends = installed.withLock({ $0 }) else {
            throw CredentialVaultError.notAvailable("the Secret Service backend is only in \(FullExecutable.name)")
        }
        return backends
    }

    /// Opens (or creates) the sealed-file vault with the key the options give, or the device
    /// key when none is given. A vault that needs another kind of key is reported clearly.
    package static func openSealedFile(_ args: ParsedArguments, create: Bool) throws -> SealedFileStore? {
        let url = vaultURL(args)
        // Only a missing file is "no vault": a link, a loose mode or an unreadable directory is
        // reported, never taken for an empty vault or a place to create one.
        try checkOneKeyOption(args)
        let present = try LockedVault.ifPresent(at: url)
        let configuration = try configuration(args)
        guard let locked = present else {
            guard create else { return nil }
            let key = try explicitKey(args, confirmNew: true)
            return try SealedFileStore.openOrCreate(at: url, secret: key ?? .device, kdf: kdf(args), configuration: configuration)
        }
        // Asked for only when needed: with a cached key, a passphrase is neither read nor prompted for.
        func key() throws -> VaultSecret {
            if let key = try explicitKey(args) { return key }
            guard locked.keySource == .device else {
                throw UsageError(
                    "\(url.path) is unlocked with a \(locked.keySource): give --passphrase-file, --key-file or --ask-passphrase")
            }
            return .device
        }
        guard let seconds = try keyCacheSeconds(args), locked.keySource != .device else {
            return try locked.unlock(with: key(), configuration: configuration)
        }
        let cache = KernelKeyCache()
        if seconds == 0 {
            try locked.forgetCachedKey(in: cache)
            return try locked.unlock(with: key(), configuration: configuration)
        }
        var usage: UsageError?
        let opened: (store: SealedFileStore, hit: Bool, stored: Bool)
        do {
            opened = try locked.unlock(cachingKeyIn: cache, for: .seconds(seconds), configuration: configuration) {
                () throws(CredentialVaultError) -> VaultSecret in
                do {
                    return try key()
                } catch let error as CredentialVaultError {
                    throw error
                } catch {
                    usage = error as? UsageError ?? UsageError("\(error)")
                    throw .invalidArgument("no key")
                }
            }
        } catch {
            if let usage { throw usage }  // the key options' own error, as without the cache
            throw error
        }
        if !opened.hit && !opened.stored {
            TerminalIO().error("warning: the kernel keyring refused the key cache (--key-cache): the key was not cached")
        }
        return opened.store
    }

    /// `--key-cache SECONDS` or `$CREDVAULT_KEY_CACHE`: how long the kernel keyring keeps the
    /// vault's unlocked key (1 to 604800; 0 forgets it now); `nil` when not asked (the default).
    package static func keyCacheSeconds(_ args: ParsedArguments) throws -> Int? {
        guard let text = args.options["key-cache"] ?? ProcessInfo.processInfo.environment["CREDVAULT_KEY_CACHE"] else { return nil }
        guard let seconds = Int(text), (0...604_800).contains(seconds) else {
            throw UsageError("--key-cache is a number of seconds, 0 to 604800 (7 days)")
        }
        return seconds
    }
}

/// A concrete backend.
package enum VaultBackend: String, Sendable, Hashable, CustomStringConvertible {
    /// The Secret Service (only in `credvault-full`).
    case secretService = "secret-service"
    /// The sealed file.
    case file
    /// Process memory: nothing survives the process.
    case memory
    /// The fleet store in PostgreSQL (only in `credvault-full`).
    case postgres

    /// The name as `--backend` takes it.
    package var description: String { rawValue }
}

/// Which backend a name means here, and why (`credvault info` shows why for `auto`).
package struct BackendResolution: Sendable, Hashable {
    /// The backend.
    package var kind: VaultBackend
    /// Why, in words ("chosen explicitly", or what the Secret Service answered for `auto`).
    package var reason: String
    /// `auto` found the Secret Service with its keyring locked (`kind` is then
    /// `.secretService`, and `reason` says how to go on): commands stop with exit code 10.
    package var isLocked: Bool

    /// Creates a resolution.
    package init(kind: VaultBackend, reason: String, isLocked: Bool = false) {
        self.kind = kind
        self.reason = reason
        self.isLocked = isLocked
    }
}

/// `--backend auto` found the keyring locked: exit code 10 (`locked`), with `message` (how to
/// unlock, or to choose the file) as the one line on stderr.
package struct LockedKeyringError: Error, Sendable {
    /// What happened and what to do.
    package let message: String

    /// Creates the error.
    package init(message: String) { self.message = message }
}

/// The backends that need the Secret Service (libsecret, glib, gio), which the lean `credvault`
/// does not link: `credvault-full` installs them with `VaultOptions.install`.
package protocol ExtendedBackends: Sendable {
    /// What `name` (`secret-service`, `auto` or `automatic`) means here; `auto` asks the Secret
    /// Service without prompting and falls back to the sealed file at `vaultURL` when it is
    /// unavailable (a locked keyring gives a resolution with `isLocked`).
    func resolve(_ name: String, vaultURL: URL) throws -> BackendResolution
    /// The Secret Service store; with `allowingInteraction`, its provider may ask a person.
    func openSecretService(allowingInteraction: Bool) -> any TokenStorageBackend
    /// Adds the Secret Service's state, collection and capabilities to `info` (`credvault
    /// info`); returns the exit code. Never prompts.
    func describeSecretService(into info: inout [(String, String)]) -> Int32
    /// The keyring and TPM custodians (`--tpm-tcti` or `$CREDVAULT_TPM_TCTI` names the TPM).
    func custodians(_ args: ParsedArguments) throws -> [any DeviceCustodian]
    /// The fleet store of `--postgres` (or `$CREDVAULT_POSTGRES`), opened as this host.
    func openPostgres(_ args: ParsedArguments) throws -> any TokenStorageBackend
    /// `error`, raised by the fleet store, in its own words (`nil`: the common wording).
    func describeFleetError(_ error: CredentialVaultError) -> String?
}

extension ExtendedBackends {
    /// Without the fleet store module: not available.
    package func openPostgres(_ args: ParsedArguments) throws -> any TokenStorageBackend {
        throw CredentialVaultError.notAvailable("the postgres backend is only in \(FullExecutable.name)")
    }

    /// Without the fleet store module: the common wording.
    package func describeFleetError(_ error: CredentialVaultError) -> String? { nil }
}
