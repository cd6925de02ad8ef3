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
package enum InitCommand: Command {
    package static let name = "init"
    package static let summary = "create a sealed-file vault"
    package static let help = """
        usage: credvault init [--vault PATH] [--passphrase-file PATH | --key-file PATH | --ask-passphrase | --device] [--kdf PRESET]
                              [--custody file|keyring|tpm|portal] [--rollback-counter | --no-rollback-counter]

        Creates an empty vault (directory 0700, file 0600) unlocked by the given key (default:
        this machine's device key). Fails when a vault exists. --custody chooses who keeps the
        device secret (device-only credentials, a device-key vault) and the rollback counter:
        tpm (this machine's TPM; a copy of $HOME without it opens nothing device-only), keyring
        (the login keyring; a copy of $HOME also needs the login password) or file (the
        host-secret file, the default and the weakest). Keyring and tpm vaults get a rollback
        counter: an older copy of the vault put back is refused (exit 13) until
        `credvault accept-restore`.

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        let url = vault.request.vaultURL
        let key = try vault.request.unlock.explicitKey(confirmNew: true) ?? .device
        let store = try SealedFileStore.create(at: url, secret: key, kdf: vault.request.kdf(), configuration: vault.configuration())
        let counter = store.hasRollbackCounter ? ", with a rollback counter" : ""
        io.status("created \(store.url.path) (unlocked with its \(store.keySource); custody: \(store.custody.name)\(counter))")
        return ExitCode.success
    }
}

/// `credvault keygen PATH`: a new random key file.
package enum KeygenCommand: Command {
    package static let name = "keygen"
    package static let summary = "create a random key file"
    package static let help = """
        usage: credvault keygen PATH

        Writes 32 random bytes to a new file PATH (mode 0600; refuses to overwrite), to use
        with --key-file.
        """
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        let path = try args.positionals("path")[0]
        _ = try VaultSecret.createKeyFile(at: URL(fileURLWithPath: path))
        return ExitCode.success
    }
}

/// `credvault passwd`: change what unlocks the vault.
package enum PasswdCommand: Command {
    package static let name = "passwd"
    package static let summary = "change the passphrase or key that unlocks the vault"
    package static let help = """
        usage: credvault passwd [current key options] (--new-passphrase-file PATH | --new-key-file PATH | --ask-new-passphrase | --new-device)

        Re-wraps the vault's data key under the new key; records are not re-encrypted. The
        current key (common options) is checked first. Atomic: after a crash the vault opens
        with the old key or the new one.

        """ + VaultOptions.help
    package static let flags: Set<String> = ["ask-new-passphrase", "new-device"]
    package static let options: Set<String> = ["new-passphrase-file", "new-key-file"]

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        var new: [VaultSecret] = []
        if let path = args.options["new-passphrase-file"] { new.append(try SecretReader.passphrase(fromFile: path)) }
        if let path = args.options["new-key-file"] { new.append(.keyFile(URL(fileURLWithPath: path))) }
        if args.flags.contains("ask-new-passphrase") { new.append(try Prompt.passphrase(confirm: true)) }
        if args.flags.contains("new-device") { new.append(.device) }
        guard new.count == 1 else { throw UsageError("give exactly one new key") }
        let current = try vault.request.unlock.explicitKey() ?? .device
        guard let store = try vault.openSealedFile(create: false) else {
            throw CredentialVaultError.notAvailable("no vault at \(vault.request.vaultURL.path)")
        }
        try store.changeSecret(from: current, to: new[0], kdf: vault.request.kdf())
        io.status("\(store.url.path) is now unlocked with its \(store.keySource)")
        return ExitCode.success
    }
}

/// `credvault rotate`: a new data key, every record re-sealed.
package enum RotateCommand: Command {
    package static let name = "rotate"
    package static let summary = "replace the vault's data key and re-seal every record"
    package static let help = """
        usage: credvault rotate [key options]

        Makes a new random data key, re-seals every record with it and wraps it with the same
        key as before. Atomic.

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        let key = try vault.request.unlock.explicitKey() ?? .device
        guard let store = try vault.openSealedFile(create: false) else {
            throw CredentialVaultError.notAvailable("no vault at \(vault.request.vaultURL.path)")
        }
        try store.rotateDataKey(secret: key)
        io.status("rotated the data key of \(store.url.path)")
        return ExitCode.success
    }
}

/// `credvault info`: what the backend is and how it is set up.
package enum InfoCommand: Command {
    package static let name = "info"
    package static let summary = "show the backend, where it stores, how it is unlocked, its capabilities"
    package static let help = """
        usage: credvault info [--json] [common options]

        Shows the backend (with --backend auto: which one was chosen and why; with
        --backend libsecret-file: which file, where its key comes from, and why), where it stores,
        whether and how it is locked, the format and KDF of a sealed-file vault, and the
        backend's capabilities. Never shows a secret. For the Secret Service: locked or
        unlocked, and its collection; exit code 8 when it cannot be reached, 10 when --backend
        auto finds it locked (unlock it, or pass --backend file).

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        let decision = try vault.resolve(vault.request.backend)
        var info: [(String, String)] = [("backend", decision.kind.rawValue)]
        if ["auto", "automatic"].contains(vault.request.backend) || decision.kind == .libsecretFile {
            info.append(("chosen because", decision.reason))
        }
        var status = ExitCode.success
        if decision.kind == .libsecretFile, let file = decision.keyringFile {
            info.append(("path", file.path))
            info.append(("key from", file.key))
            if let store = try vault.openStore(create: false) {
                info.append(("credentials", String(try store.listKeys().count)))
                info.append(("capabilities", store.capabilities.description))
            }
        } else if decision.kind == .secretService {
            status = try vault.backends.describeSecretService(into: &info)
            // `auto` on a locked keyring: shown, and reported like any command would (exit 10).
            if decision.isLocked && status == ExitCode.success { status = ExitCode.locked }
        } else if decision.kind == .file {
            let url = vault.request.vaultURL
            info.append(("path", url.path))
            if let locked = try LockedVault.ifPresent(at: url) {
                info.append(("format", locked.formatVersion))
                info.append(("unlocked with", locked.keySource.description))
                info.append(("custody", locked.custody.description))
                info.append((
                    "rollback counter",
                    locked.hasRollbackCounter ? "yes, kept by the \(locked.custody.name) custodian (an older copy is refused)" : "no"))
                if let kdf = locked.kdf { info.append(("kdf", kdf.description)) }
                if let store = try vault.openSealedFile(create: false) {
                    info.append(("credentials", String(try store.listKeys().count)))
                    info.append(("capabilities", store.capabilities.description))
                }
            } else {
                info.append(("state", "no vault yet (created by the first store, unlocked with the device key)"))
                // What the first store will make it under: the resolution's, or a sandbox's default.
                let custody = decision.custody ?? (vault.request.insideSandbox ? vault.request.defaultCustody : nil)
                if let custody, vault.request.custodyName == nil { info.append(("custody", custody.description)) }
            }
        } else if let store = try vault.openStore(create: false) {
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

/// `credvault custody`: move the vault to another custodian.
package enum CustodyCommand: Command {
    package static let name = "custody"
    package static let summary = "move the vault's device secret and rollback counter to another custodian"
    package static let help = """
        usage: credvault custody file|keyring|tpm|portal [--rollback-counter | --no-rollback-counter] [key options]

        Moves the vault to the TPM, the login keyring or the host-secret file: the data key is
        wrapped again (the current key, common options, is checked first), device-only
        credentials are sealed again with the new device key, and a new rollback counter is
        made at the new custodian (default: with keyring and tpm) and the old one removed.
        Atomic: after a crash the vault opens under the old custody or the new one.

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        let name = try args.positionals("custody")[0]
        guard let custody = DeviceCustody(name: name) else { throw UsageError("the custody is file, keyring, tpm or portal") }
        let key = try vault.request.unlock.explicitKey() ?? .device
        guard let store = try vault.openSealedFile(create: false) else {
            throw CredentialVaultError.notAvailable("no vault at \(vault.request.vaultURL.path)")
        }
        try store.changeCustody(to: custody, secret: key, rollbackCounter: vault.request.rollbackCounter())
        let counter = store.hasRollbackCounter ? " with a rollback counter" : " without a rollback counter"
        io.status("\(store.url.path) is now under \(custody.name) custody\(counter)")
        return ExitCode.success
    }
}

/// `credvault accept-restore`: accept a vault restored from a backup on purpose.
package enum AcceptRestoreCommand: Command {
    package static let name = "accept-restore"
    package static let summary = "accept a vault restored from an older copy (refused with exit 13 until then)"
    package static let help = """
        usage: credvault accept-restore [key options]

        A vault with a rollback counter refuses an older copy of itself (exit 13): a backup
        restore, a disk snapshot, or an attacker bringing back a revoked token or a used
        single-use value. When you restored it on purpose, this opens it (the key, common
        options, is checked), and makes the restored state the current one: the counter moves
        on, so every other copy, the one it replaced included, is refused from now on. A copy
        from before the vault got its counter is accepted as it was then (without a counter:
        credvault custody --rollback-counter adds one again).
        Credentials revoked or used since that copy are back: revoke them again if needed.

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        let url = vault.request.vaultURL
        guard let locked = try LockedVault.ifPresent(at: url) else { throw CredentialVaultError.notAvailable("no vault at \(url.path)") }
        let configuration = try vault.configuration()
        // A copy from before the vault got its counter has none, and is still a restore.
        guard try locked.mayBeARestore(configuration: configuration) else {
            io.status("\(url.path) has no rollback counter: there is nothing to accept")
            return ExitCode.success
        }
        let key = try vault.request.unlock.explicitKey() ?? .device
        let store = try SealedFileStore.acceptRestore(at: url, secret: key, configuration: configuration)
        guard store.hasRollbackCounter else {
            // A copy from before the counter is accepted as it was then, without one: saying
            // that older copies are refused would promise a protection it no longer has.
            io.status(
                "accepted \(store.url.path) as restored (\(try store.listKeys().count) credentials); it has no rollback counter, as when that copy was made, so older copies are not refused: credvault custody --rollback-counter adds one again")
            return ExitCode.success
        }
        io.status("accepted \(store.url.path) as restored (\(try store.listKeys().count) credentials); older copies are refused from now on")
        return ExitCode.success
    }
}
