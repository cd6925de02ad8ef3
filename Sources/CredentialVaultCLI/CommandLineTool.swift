import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The `credvault` entry point both executables share: pick the command, parse its arguments,
/// run it, map errors to exit codes with one clear line on stderr (never a secret: errors carry
/// none).
package enum CommandLineTool {
    /// Runs `credvault ARGUMENTS` (without the program name) with `commands` and the backends
    /// the executable links; returns the exit code.
    ///
    /// The lean `credvault`'s backends hand over (`BackendFactory.handOver`): called, instead of
    /// running anything, for a command it does not have (one of `Registry.fullOnly`) and for a
    /// command line that names a backend it does not link (`--backend` or `$CREDVAULT_BACKEND`
    /// `secret-service`, `auto` or `postgres`) or a vault that needs a custodian it does not
    /// have, with a few words saying what needs the full executable. It does not return when
    /// it can hand over (see `FullExecutable.handOver`).
    ///
    /// Output that could not be written (a broken pipe, a full disk, a closed stdout) makes the
    /// exit code 3 (unless it was already a failure), with one line on stderr.
    package static func run(
        _ arguments: [String], commands: [any Command.Type], backends: any BackendFactory
    ) -> Int32 {
        let status = dispatch(arguments, commands: commands, backends: backends)
        guard let failure = StandardOutput.failure else { return status }
        TerminalIO().error(OutputError(failure).description)
        return status == ExitCode.success ? ExitCode.failure : status
    }

    private static func dispatch(
        _ arguments: [String], commands: [any Command.Type], backends: any BackendFactory
    ) -> Int32 {
        let io = TerminalIO()
        let handOver = backends.handOver
        var arguments = arguments
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            io.print(Registry.usage())
            return arguments.isEmpty ? ExitCode.usage : ExitCode.success
        }
        arguments.removeFirst()
        guard let command = commands.first(where: { $0.name == name }) else {
            if let handOver, Registry.fullOnly.contains(where: { $0.name == name }) { return handOver("credvault \(name)") }
            io.error("unknown command '\(name)'; see credvault --help")
            return ExitCode.usage
        }
        // The backend the command works on, once known: its errors are worded for it.
        var backend: String?
        do {
            // Parsed first: `--help` or `-h` asks for help only in option position, never as a
            // name after `--` or as an option's value (see `ParsedArguments`).
            let parsed = try ParsedArguments(
                arguments, flags: command.flags.union(VaultOptions.flags), options: command.options.union(VaultOptions.options))
            if parsed.wantsHelp {
                io.print(command.help)
                return ExitCode.success
            }
            let request = VaultRequest(parsed, defaultBackend: command.defaultBackend)
            let chosen = request.backend
            backend = command.defaultBackend == VaultBackend.postgres.rawValue ? command.defaultBackend : chosen
            if let handOver, VaultAccess.needsFullExecutable(chosen) { return handOver("the \(chosen) backend") }
            if let handOver, chosen == VaultBackend.file.rawValue, let needing = request.custodyNeedingFullExecutable {
                return handOver(needing)
            }
            // `credvault custody keyring|tpm` names its custodian as an argument, not `--custody`:
            // the lean executable has neither, and would only fail saying it was not configured.
            if let handOver, command.name == CustodyCommand.name, let target = parsed.positionals.first,
                let custody = DeviceCustody(name: target), custody != .file
            {
                return handOver("credvault custody \(custody.name)")
            }
            return try command.run(parsed, io, VaultAccess(request: request, backends: backends))
        } catch is OutputError {
            return ExitCode.failure  // remembered by StandardOutput, reported by `run`
        } catch let error as UsageError {
            // docker reads a helper's every failure, usage included, as one line on stdout
            // and exit code 1.
            if command.name == DockerCredentialCommand.name {
                io.print(TerminalText.escaped("\(error.message); see credvault \(name) --help"))
                return ExitCode.notFound
            }
            io.error("\(error.message); see credvault \(name) --help")
            return ExitCode.usage
        } catch let error as LockedKeyringError {
            io.error(error.message)
            return ExitCode.locked
        } catch let error as CredentialVaultError {
            io.error(backends.describe(error, backend: backend))
            return ExitCode.of(error)
        } catch {
            io.error("\(error)")
            return ExitCode.failure
        }
    }
}
