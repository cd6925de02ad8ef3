import CredentialVault
import Foundation

/// Entry point: pick the command, parse its arguments, run it, map errors to exit codes with
/// one clear line on stderr (never a secret: errors carry none).
func main() -> Int32 {
    let io = TerminalIO()
    var arguments = Array(CommandLine.arguments.dropFirst())
    guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
        io.print(usage())
        return arguments.isEmpty ? ExitCode.usage : ExitCode.success
    }
    arguments.removeFirst()
    guard let command = commands.first(where: { $0.name == name }) else {
        io.error("unknown command '\(name)'; see credvault --help")
        return ExitCode.usage
    }
    if arguments.contains("--help") || arguments.contains("-h") {
        io.print(command.help)
        return ExitCode.success
    }
    do {
        let parsed = try ParsedArguments(
            arguments, flags: command.flags.union(VaultOptions.flags), options: command.options.union(VaultOptions.options))
        return try command.run(parsed, io)
    } catch let error as UsageError {
        io.error("\(error.message); see credvault \(name) --help")
        return ExitCode.usage
    } catch let error as CredentialVaultError {
        io.error(error.description)
        return ExitCode.of(error)
    } catch {
        io.error("\(error)")
        return ExitCode.failure
    }
}

exit(main())
