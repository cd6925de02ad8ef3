import CredentialVault
import Foundation

/// Every subcommand, in the order `credvault --help` lists them. A new command adds itself here.
let commands: [any Command.Type] = [
    StoreCommand.self, LookupCommand.self, DeleteCommand.self, ListCommand.self, InitCommand.self,
    InfoCommand.self, KeygenCommand.self, PasswdCommand.self, RotateCommand.self, MigrateCommand.self,
    AuthCommand.self, InsForgeCommand.self,
]

/// The top-level help.
func usage() -> String {
    var text = """
        credvault - keep credentials encrypted (sealed file, Secret Service, memory)

        usage: credvault COMMAND [OPTIONS]   (credvault COMMAND --help for details)

        commands:

        """
    for command in commands {
        text += "  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary + "\n"
    }
    text += "\n" + VaultOptions.help + "\nExit codes: " + exitCodeHelp
    return text
}

let exitCodeHelp = """
    0 success, 1 not found, 2 usage error, 3 other failure, 4 wrong passphrase or key,
    5 corrupted or tampered vault, 6 device mismatch, 7 busy or timed out, 8 not available,
    9 permission denied, 10 locked, 11 the OpenID provider refused (auth), 12 the provider
    could not be reached (auth).
    """
