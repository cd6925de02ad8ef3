import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The subcommands, in the order `credvault --help` lists them: the vault commands, which every
/// `credvault` runs, then the commands only `credvault-full` has (they need the Secret Service,
/// OpenSSL or networking libraries). A new command adds itself here.
package enum Registry {
    /// The vault commands (this library).
    package static let vaultCommands: [any Command.Type] = [
        StoreCommand.self, LookupCommand.self, DeleteCommand.self, ListCommand.self, InitCommand.self,
        InfoCommand.self, KeygenCommand.self, PasswdCommand.self, RotateCommand.self, CustodyCommand.self,
        AcceptRestoreCommand.self, RetireCommand.self, ExecCommand.self, GitCredentialCommand.self, DockerCredentialCommand.self,
        ServeCredentialsCommand.self,
    ]

    /// The commands `credvault-full` adds, by name and summary (the full executable's command
    /// types take both from here, so `credvault --help` is the same text in either executable).
    package static let fullOnly: [(name: String, summary: String)] = [
        ("migrate", "move credentials from one backend to another"),
        ("auth", "sign in with OpenID Connect and hand out access tokens"),
        ("insforge", "sign in to an InsForge backend, session kept in the vault"),
        ("fleet", "share credentials with a fleet of hosts through PostgreSQL"),
    ]

    /// The summary of the full-only command `name`.
    package static func summary(of name: String) -> String {
        fullOnly.first { $0.name == name }?.summary ?? ""
    }

    /// The top-level help.
    package static func usage() -> String {
        var text = """
            credvault - keep credentials encrypted (sealed file, Secret Service, memory)

            usage: credvault COMMAND [OPTIONS]   (credvault COMMAND --help for details)

            commands:

            """
        let commands = vaultCommands.map({ ($0.name, $0.summary) }) + fullOnly
        // One column for the names, as wide as the longest (never cut off) plus two spaces.
        let width = commands.map(\.0.count).max() ?? 0
        for (name, summary) in commands {
            text += "  " + name + String(repeating: " ", count: width + 2 - name.count) + summary + "\n"
        }
        text += "\n" + VaultOptions.help + "\nExit codes: " + exitCodeHelp
        return text
    }

    package static let exitCodeHelp = """
        0 success, 1 not found, 2 usage error (or what it would create exists already), 3 other
        failure (stdout not writable too), 4 wrong passphrase or key, 5 corrupted or tampered
        vault, 6 device mismatch, 7 busy, timed out or changed meanwhile (retry), 8 not
        available, 9 permission denied, 10 locked, 11 the OpenID provider refused (auth), 12 the
        provider could not be reached (auth), 13 the vault was rolled back to an older copy
        (accept-restore), 14 the Secret Service provider asks a person (--interactive allows it);
        credvault exec: 126 the command cannot be run, 127 it was not found, else the command's
        own status.
        """
}
