import CredentialVaultCLI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The lean `credvault`: the vault commands with the file and memory backends, linked with
/// CredentialVault alone (and the Swift libraries statically in release), so that a lookup
/// starts in a few milliseconds. A command line that needs the Secret Service, OpenSSL or
/// networking (`migrate`, `auth`, `insforge`, `--backend secret-service|auto`) is handed over
/// to `credvault-full` next to it, which runs it exactly as given (`LeanBackends`).
CommandLineTool.main(commands: Registry.vaultCommands, backends: LeanBackends())
