import CredentialVault
import CredentialVaultSecretService
import Foundation

/// The options every command shares: which backend and vault, and how to unlock it.
/// Secrets come only from files, stdin or a no-echo prompt, never from arguments.
enum VaultOptions {
    static let flags: Set<String> = ["device", "ask-passphrase", "json"]
    static let options: Set<String> = ["vault", "passphrase-file", "key-file", "kdf", "backend"]

    static let help = """
        common options:
          --backend file|secret-service|memory|auto
                                     storage backend (default: file, or $CREDVAULT_BACKEND); auto is
                                     the Secret Service when it is reachable and unlocked, else the file
          --vault PATH               sealed-file vault (default: $XDG_DATA_HOME/credential-vault/default.cvault)
          --passphrase-file PATH     unlock with the passphrase in PATH (one trailing newline is ignored);
                                     $CREDVAULT_PASSPHRASE_FILE does the same
          --key-file PATH            unlock with a key file (see credvault keygen)
          --ask-passphrase           prompt for the passphrase without echo (needs a terminal)
          --device                   unlock with this machine's device key (the default)
          --kdf interactive|moderate|sensitive
                                     Argon2id cost when a passphrase vault is created (default: moderate)
          --json                     machine-readable output
        """

    /// The vault file.
    static func vaultURL(_ args: ParsedArguments) -> URL {
        args.options["vault"].map { URL(fileURLWithPath: $0) } ?? SealedFileStore.defaultURL
    }

    /// The unlock key the options ask for; `nil` when none was given (the device key then).
    static func explicitKey(_ args: ParsedArguments, confirmNew: Bool = false) throws -> VaultKey? {
        var chosen: [VaultKey] = []
        if let path = args.options["passphrase-file"] ?? ProcessInfo.processInfo.environment["CREDVAULT_PASSPHRASE_FILE"] {
            chosen.append(try passphrase(fromFile: path))
        }
        if let path = args.options["key-file"] { chosen.append(.keyFile(URL(fileURLWithPath: path))) }
        if args.flags.contains("ask-passphrase") { chosen.append(try Prompt.passphrase(confirm: confirmNew)) }
        if args.flags.contains("device") { chosen.append(.device) }
        guard chosen.count <= 1 else {
            throw UsageError("give one of --passphrase-file, --key-file, --ask-passphrase, --device")
        }
        return chosen.first
    }

    /// Reads a passphrase file: the bytes as they are, minus one trailing newline.
    static func passphrase(fromFile path: String) throws -> VaultKey {
        guard var bytes = FileManager.default.contents(atPath: path).map(Array.init) else {
            throw UsageError("cannot read the passphrase file \(path)")
        }
        defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        if bytes.last == 0x0A { bytes.removeLast() }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { throw UsageError("the passphrase file \(path) is empty") }
        return .passphrase(SecureBytes(copying: bytes))
    }

    /// The Argon2id preset for a new passphrase vault.
    static func kdf(_ args: ParsedArguments) throws -> KDFParameters {
        switch args.options["kdf"] ?? "moderate" {
        case "interactive": .interactive
        case "moderate": .moderate
        case "sensitive": .sensitive
        // Only for the project's own tests: no brute-force resistance at all.
        case "insecure-testing-only": .insecureTestingOnly
        default: throw UsageError("--kdf is interactive, moderate or sensitive")
        }
    }

    /// The backend name from `--backend` or `$CREDVAULT_BACKEND` (default `file`).
    static func backendName(_ args: ParsedArguments) -> String {
        args.options["backend"] ?? ProcessInfo.processInfo.environment["CREDVAULT_BACKEND"] ?? "file"
    }

    /// Opens the chosen store. With `create`, a missing vault is created; without, `nil` is
    /// returned for a missing vault (read commands then see an empty store).
    static func openStore(_ args: ParsedArguments, create: Bool) throws -> (any TokenStorageAdapter)? {
        try openStore(named: backendName(args), args, create: create)
    }

    /// Opens the backend called `name` (`file`, `secret-service`, `memory` or `auto`).
    static func openStore(named name: String, _ args: ParsedArguments, create: Bool) throws -> (any TokenStorageAdapter)? {
        switch try resolve(name, args).kind {
        case .file: return try openSealedFile(args, create: create)
        case .secretService: return SecretServiceStore()
        case .memory: return InMemoryStore()
        }
    }

    /// What backend `name` means here; `auto` asks the Secret Service (never prompting) and
    /// falls back to the sealed file. An explicit name was already chosen over
    /// $CREDVAULT_BACKEND, so the resolver does not consult it again.
    static func resolve(_ name: String, _ args: ParsedArguments) throws -> BackendDecision {
        guard let choice = BackendChoice(name: name) else {
            throw UsageError("unknown backend '\(name)' (file, secret-service, memory, auto)")
        }
        return try BackendResolver(environment: [:], sealedFileURL: vaultURL(args)).decide(choice)
    }

    /// Opens (or creates) the sealed-file vault with the key the options give, or the device
    /// key when none is given. A vault that needs another kind of key is reported clearly.
    static func openSealedFile(_ args: ParsedArguments, create: Bool) throws -> SealedFileStore? {
        let url = vaultURL(args)
        let key = try explicitKey(args, confirmNew: create && !FileManager.default.fileExists(atPath: url.path))
        guard FileManager.default.fileExists(atPath: url.path) else {
            guard create else { return nil }
            return try SealedFileStore.openOrCreate(at: url, key: key ?? .device, kdf: kdf(args))
        }
        let locked = try LockedVault(url: url)
        if key == nil && locked.keySource != .device {
            throw UsageError(
                "\(url.path) is unlocked with a \(locked.keySource): give --passphrase-file, --key-file or --ask-passphrase")
        }
        return try locked.unlock(with: key ?? .device)
    }
}
