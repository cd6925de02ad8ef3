#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// `credvault exec --env VAR=SERVICE/ACCOUNT --fd VAR=SERVICE/ACCOUNT -- COMMAND [ARGS]`: runs
/// a command with credentials in its environment or in sealed in-memory files, in place of
/// `credvault` (see `ProcessImage` for why no child process).
package enum ExecCommand: Command {
    package static let name = "exec"
    package static let summary = "run a command with credentials in its environment or in in-memory files"
    package static let help = """
        usage: credvault exec [--env VAR=SERVICE/ACCOUNT]... [--fd VAR=SERVICE/ACCOUNT]... [--optional]
                              [common options] -- COMMAND [ARGS]

        Reads every named credential, then runs COMMAND in place of credvault (execve: the same
        process, so every signal sent to it reaches COMMAND, its exit status is COMMAND's own, a
        death by signal included, and nothing is left behind when it is killed). Values are
        never put on a command line.
          --env VAR=SERVICE/ACCOUNT   VAR holds the credential's bytes (no NUL, at most 128 KiB)
          --fd VAR=SERVICE/ACCOUNT    the credential is in an anonymous in-memory file (memfd,
                                      sealed read-only, never on disk) that COMMAND inherits;
                                      VAR is its path, /dev/fd/N (read it any number of times)
          --optional                  a missing credential leaves VAR unset instead of failing
                                      (also a VAR that credvault inherited)
        Both options may be given many times. SERVICE/ACCOUNT is split at its last /: the
        service may hold / as it is (git:https://example.com/alice); a / in the account is
        written %2F and a % in either name %25. COMMAND is looked up on PATH.
        Exit codes: 1 a credential is missing (nothing was run), 126 COMMAND cannot be run, 127
        it was not found, the vault's own codes (2-10, 13) before it starts; once it runs, its own
        (a shell shows a death by signal N as 128+N). COMMAND inherits credvault's core-dump
        limit of 0.

        """ + VaultOptions.help
    package static let flags: Set<String> = ["optional"]
    package static let options: Set<String> = ["env", "fd"]

    /// The longest `VAR=VALUE` the kernel takes in an environment (`MAX_ARG_STRLEN`, 32 pages,
    /// with its NUL).
    static let longestVariable = 131_072 - 1

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        guard let separator = args.separatorIndex else { throw UsageError("give the command after --") }
        guard separator == 0 else { throw UsageError("unexpected '\(args.positionals[0])' before --") }
        let command = args.positionals
        guard !command.isEmpty, !command[0].isEmpty else { throw UsageError("give the command after --") }
        let inEnvironment = try (args.optionValues["env"] ?? []).map { text throws(UsageError) in try CredentialReference(parsing: text, option: "env") }
        let inFiles = try (args.optionValues["fd"] ?? []).map { text throws(UsageError) in try CredentialReference(parsing: text, option: "fd") }
        var seen = Set<String>()
        for reference in inEnvironment + inFiles where !seen.insert(reference.variable).inserted {
            throw UsageError("the variable \(reference.variable) is given twice")
        }

        // Every value read is wiped when the command could not be run (a later read failed,
        // or `execve` did); after a successful `execve` this memory no longer exists.
        var values: [(reference: CredentialReference, value: Data?)] = []
        defer { for index in values.indices { values[index].value?.wipe() } }
        if !(inEnvironment + inFiles).isEmpty {
            // One store, opened once; a vault that does not exist holds none of them.
            let store = try vault.openStore(create: false)
            for reference in inEnvironment + inFiles { values.append((reference, try store?.load(reference.key))) }
        }
        let missing = values.filter { $0.value == nil }.map(\.reference)
        if !missing.isEmpty && !args.flags.contains("optional") {
            for reference in missing { io.error("no credential \(reference.key.service) / \(reference.key.account) (for \(reference.variable)); nothing was run") }
            return ExitCode.notFound
        }

        var variables: [(name: String, value: Data)] = []
        var descriptors: [Int32] = []
        defer { descriptors.forEach { close($0) } }  // only reached when the command did not run
        for (reference, value) in values {
            guard let value else { continue }
            if inEnvironment.contains(reference) {
                guard !value.contains(0) else {
                    throw UsageError("\(reference.key.service) / \(reference.key.account) holds a NUL byte, which no environment variable can; use --fd \(reference.variable)=...")
                }
                guard reference.variable.utf8.count + 1 + value.count <= longestVariable else {
                    throw UsageError("\(reference.key.service) / \(reference.key.account) is larger than an environment variable may be (128 KiB); use --fd \(reference.variable)=...")
                }
                variables.append((reference.variable, value))
            } else {
                let fd = try value.withUnsafeBytes { bytes throws(CredentialVaultError) in
                    try SealedMemoryFile.create(name: "credvault:\(reference.variable)", contents: bytes)
                }
                descriptors.append(fd)
                variables.append((reference.variable, Data("/dev/fd/\(fd)".utf8)))
            }
        }
        // Handed on to the command: close-on-exec is cleared only now, right before the `execve`
        // (this process starts no other program that could inherit them meanwhile).
        for fd in descriptors { _ = fcntl(fd, F_SETFD, 0) }
        // A missing optional credential leaves its variable unset, also one inherited.
        let failure = ProcessImage.replace(with: command, variables: variables, unset: missing.map(\.variable))
        for fd in descriptors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        if failure.code == E2BIG {
            io.error("cannot run \(command[0]): its arguments and environment are too large for the system (use --fd for large values)")
            return ExitCode.commandNotExecutable
        }
        io.error("cannot run \(command[0]): \(String(cString: strerror(failure.code)))")
        return failure.found ? ExitCode.commandNotExecutable : ExitCode.commandNotFound
    }
}
