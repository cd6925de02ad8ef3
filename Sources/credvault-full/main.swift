import CredentialVaultCLI
import Foundation

/// `credvault-full`: every command and every backend. The lean `credvault` hands it the command
/// lines that need the Secret Service, OpenSSL or networking libraries (see `FullExecutable`);
/// it can also be run directly. It hardens itself again (`execve` made it dumpable).
// tpm2-tss's ESYS logs every TPM error to stderr, expected ones included (a counter not found,
// a PCR policy refused); the CLI reports errors itself, in one line. A caller's own setting wins.
setenv("TSS2_LOG", "all+NONE", 0)
CommandLineTool.main(
    commands: Registry.vaultCommands + [MigrateCommand.self, AuthCommand.self, InsForgeCommand.self, FleetCommand.self], backends: FullBackends())
