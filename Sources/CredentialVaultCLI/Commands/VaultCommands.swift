import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `credvault init`: create a vault explicitly.
public enum InitCommand: Command {
    public static let name = "init"
    public static let summary = "create a sealed-file vault"
    public static let help = """
        usage: credvault init [--vault PATH] [--passphrase-file PATH | --key-file PATH | --ask-passphrase | --device] [--kdf PRESET]

        Creates an empty vault (directory 0700, file 0600) unlocked by the given key (default:
        this machine's device key). Fails when a vault exists.

        """ + VaultOptions.help
    public static let flags: Set<String> = []
    public static let options: Set<String> = []

    public static func run(_ args: ParsedArguments, _ io: TerminalIO) throws -> Int32 {
        _ = try args.positionals()
        let url = VaultOptions.vaultURL(args)
        let key = try VaultOptions.explicitKey(args, confirmNew: true) ?? .device
        let store = try SealedFileStore.create(at: url, key: key, kdf: VaultOptions.kdf(args))
        io.status("created \(store.url.path) (unlocked with its \(store.keySource))")
        return ExitCode.success
    }
}

/// `credvault keygen PATH`: a new random key file.
public enum KeygenCommand: Command {
    public static let name = "keygen"
    public static let summary = "create a random key file"
    public static let help = """
        usage: credvault keygen PATH

        Writes 32 random bytes to a new file PATH (mode 0600; refuses to overwrite), to use
        with --key-file.
        """
    public static let flags: Set<String> = []
    public static let options: Set<String> = []

    public static func run(_ args: ParsedArguments, _ io: TerminalIO) throws -> Int32 {
        let path = try args.positionals("path")[0]
        _ = try VaultKey.createKeyFile(at: URL(fileURLWithPath: path))
        return ExitCode.success
    }
}

/// `credvault passwd`: change what unlocks the vault.
public enum PasswdCommand: Command {
    public static let name = "passwd"
    public static let summary = "change the passphrase or key that unlocks the vault"
    public static let help = """
        usage: credvault passwd [current key options] (--new-passphrase-file PATH | --new-key-file PATH | --ask-new-passphrase | --new-device)

        Re-wraps the vault's data key under the new key; records are not re-encrypted. The
        current key (common options) is checked first. Atomic: after a crash the vault opens
        with the old key or the new one.

        """ + VaultOptions.help
    public static let flags: Set<String> = ["ask-new-passphrase", "new-device"]
    public static let options: Set<String> = ["new-passphrase-file", "new-key-file"]

    public static func run(_ args: ParsedArguments, _ io: TerminalIO) throws -> Int32 {
        _ = try args.positionals()
        var new: [VaultKey] = []
        if let path = args.options["new-passphrase-file"] { new.append(try VaultOptions.passphrase(fromFile: path)) }
        if let path = args.options["new-key-file"] { new.append(.keyFile(URL(fileURLWithPath: path))) }
        if args.flags.contains("ask-new-passphrase") { new.append(try Prompt.passphrase(confirm: true)) }
        if args.flags.contains("new-device") { new.append(.device) }
        guard new.count == 1 else { throw UsageError("give exactly one new key") }
        let current = try VaultOptions.explicitKey(args) ?? .device
        guard let store = try VaultOptions.openSealedFile(args, create: false) else {
            throw CredentialVaultError.notAvailable("no vault at \(VaultOptions.vaultURL(args).path)")
        }
        try store.changeKey(from: current, to: new[0], kdf: VaultOptions.kdf(args))
        io.status("\(store.url.path) is now unlocked with its \(store.keySource)")
        return ExitCode.success
    }
}

/// `credvault rotate`: a new data key, every record re-sealed.
public enum RotateCommand: Command {
    public static let name = "rotate"
    public static let summary = "replace the vault's data key and re-seal every record"
    public static let help = """
        usage: credvault rotate [key options]

        Makes a new random data key, re-seals every record with it and wraps it with the same
        key as before. Atomic.

        """ + VaultOptions.help
    public static let flags: Set<String> = []
    public static let options: Set<String> = []

    public static func run(_ args: ParsedArguments, _ io: TerminalIO) throws -> Int32 {
        _ = try args.positionals()
        let key = try VaultOptions.explicitKey(args) ?? .device
        guard let store = try VaultOptions.openSealedFile(args, create: false) else {
            throw CredentialVaultError.notAvailable("no vault at \(VaultOptions.vaultURL(args).path)")
        }
        try store.rotateDataKey(key: key)
        io.status("rotated the data key of \(store.url.path)")
        return ExitCode.success
    }
}

/// `credvault info`: what the backend is and how it is set up.
public enum InfoCommand: Command {
    public static let name = "info"
    public static let summary = "show the backend, where it stores, how it is unlocked, its capabilities"
    public static let help = """
        usage: credvault info [--json] [common options]

        Shows the backend (with --backend auto: which one was chosen and why), where it stores,
        whether and how it is locked, the format and KDF of a sealed-file vault, and the
        backend's capabilities. Never shows a secret. For the Secret Service: locked or
        unlocked, and its collection; exit code 8 when it cannot be reached, 10 when --backend
        auto finds it locked (unlock it, or pass --backend file).

        """ + VaultOptions.help
    public static let flags: Set<String> = []
    public static let options: Set<String> = []

    public static func run(_ args: ParsedArguments, _ io: TerminalIO) throws -> Int32 {
        _ = try args.positionals()
        let decision = try VaultOptions.resolve(VaultOptions.backendName(args), args)
        var info: [(String, String)] = [("backend", decision.kind.rawValue)]
        if VaultOptions.backendName(args) == "auto" { info.append(("chosen because", decision.reason)) }
        var status = ExitCode.success
        if decision.kind == .secretService {
            status = try VaultOptions.extendedBackends().describeSecretService(into: &info)
            // `auto` on a locked keyring: shown, and reported like any command would (exit 10).
            if decision.isLocked && status == ExitCode.success { status = ExitCode.locked }
        } else if decision.kind == .file {
            let url = VaultOptions.vaultURL(args)
            info.append(("path", url.path))
            if let locked = try LockedVault.ifPresent(at: url) {
                info.append(("format", locked.formatVersion))
                info.append(("unlocked with", locked.keySource.description))
                if let kdf = locked.kdf { info.append(("kdf", kdf.description)) }
                if let store = try VaultOptions.openSealedFile(args, create: false) {
                    info.append(("credentials", String(try store.listKeys().count)))
                    info.append(("capabilities", store.capabilities.description))
                }
            } else {
                info.append(("state", "no vault yet (created by the first store, unlocked with the device key)"))
            }
        } else if let store = try VaultOptions.openStore(args, create: false) {
            info.append(("capabilities", store.capabilities.description))
        }
        if args.flags.contains("json") {
            let object = Dictionary(info.map { (String($0.0.map { $0 == " " ? "_" : $0 }), $0.1) }) { a, _ in a }
            io.write(TerminalText.jsonEscaped(try JSONOutput.sorted(object)) + Data("\n".utf8))
        } else {
            for (name, value) in info { io.print("\(name): \(TerminalText.escaped(value))") }
        }
        return status
    }
}
