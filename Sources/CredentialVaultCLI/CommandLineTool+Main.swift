import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension CommandLineTool {
    /// The `main` of both executables: makes the process non-dumpable with no core file
    /// (`ProcessHardening.disableCoreDumps`, before any secret is read; refuses to run when the
    /// system does not allow it, or when a debugger is already attached), puts `/dev/null` on
    /// any of the standard descriptors 0-2 that is closed (`StandardOutput.reserveStandardDescriptors`),
    /// ignores `SIGPIPE` (a failed write to stdout is an error with exit code 3, see
    /// `StandardOutput`), then runs the command line (refused when an argument is not UTF-8, see
    /// `RawArguments`) and exits with its code. `backends` are the executable's own (see `run`).
    package static func main(commands: [any Command.Type], backends: any BackendFactory) -> Never {
        // Before anything opens a descriptor: a closed stdout must fail writes, not become
        // whatever the process opens next (an eventfd would swallow a taken secret).
        StandardOutput.reserveStandardDescriptors()
        let io = TerminalIO()
        do {
            try ProcessHardening.disableCoreDumps()
            try ProcessHardening.refuseIfTraced()
        } catch {
            io.error("\(error.description); refusing to handle secrets")
            exit(ExitCode.failure)
        }
        // A reader that went away is an error to report (EPIPE), not a death by signal.
        InheritedSignals.ignoreBrokenPipes()
        do {
            // Run as `git-credential-credvault` or `docker-credential-credvault` (a link to this
            // executable), it is that helper command (`ProgramName`).
            exit(run(ProgramName.arguments(try RawArguments.decode()), commands: commands, backends: backends))
        } catch {
            io.error("\(error.message); see credvault --help")
            exit(ExitCode.usage)
        }
    }
}
