import CredentialVaultCLI
import Foundation

/// `credvault-full`: every command and every backend. The lean `credvault` hands it the command
/// lines that need the Secret Service, OpenSSL or networking libraries (see `FullExecutable`);
/// it can also be run directly. It hardens itself again (`execve` made it dumpable).
VaultOptions.install(SecretServiceBackends())
CommandLineTool.main(commands: Registry.vaultCommands + [MigrateCommand.self, AuthCommand.self, InsForgeCommand.self, FleetCommand.self])
