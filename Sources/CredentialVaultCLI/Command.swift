import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One `credvault` subcommand.
package protocol Command: Sendable {
    /// The word that selects it.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }
    /// Flags and options it accepts besides the common ones.
    static var flags: Set<String> { get }
    static var options: Set<String> { get }
    /// Runs it with the vault its command line asks for (`vault`: the common options and this
    /// executable's backends); returns the exit code.
    static func run(_ arguments: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32
    /// The backend used when neither `--backend` nor `$CREDVAULT_BACKEND` names one.
    static var defaultBackend: String { get }
}

extension Command {
    /// `file`: the sealed file, for every command but the credential helpers (`auto` there).
    package static var defaultBackend: String { VaultBackend.file.rawValue }
}

/// Exit codes (stable, documented in docs/CLI.md).
package enum ExitCode {
    package static let success: Int32 = 0
    package static let notFound: Int32 = 1
    package static let usage: Int32 = 2
    package static let failure: Int32 = 3
    package static let wrongKey: Int32 = 4
    package static let damaged: Int32 = 5
    package static let deviceMismatch: Int32 = 6
    package static let busy: Int32 = 7
    package static let notAvailable: Int32 = 8
    package static let permission: Int32 = 9
    package static let locked: Int32 = 10
    /// `credvault auth`: the provider refused (invalid grant, wrong client secret, denied...).
    package static let authFailed: Int32 = 11
    /// `credvault auth`: the provider could not be reached or did not answer in time.
    package static let unreachable: Int32 = 12
    /// The vault is older than its rollback counter (`credvault accept-restore` accepts it).
    package static let rolledBack: Int32 = 13
    /// The Secret Service provider asks a person (a dialog) and interaction was not allowed
    /// (`--interactive` or `CREDVAULT_INTERACTIVE=1` allow it).
    package static let interactionRequired: Int32 = 14
    /// `credvault exec`: the command was found but cannot be run (not executable, a bad format).
    package static let commandNotExecutable: Int32 = 126
    /// `credvault exec`: the command was not found (as a shell reports it).
    package static let commandNotFound: Int32 = 127

    package static func of(_ error: CredentialVaultError) -> Int32 {
        switch error {
        case .wrongPassphrase: wrongKey
        case .corrupted, .tampered: damaged
        case .deviceMismatch: deviceMismatch
        case .busy, .timedOut, .reopenRequired: busy
        case .notAvailable: notAvailable
        case .permissionDenied: permission
        case .locked: locked
        case .rolledBack: rolledBack
        case .interactionRequired: interactionRequired
        case .invalidArgument, .alreadyExists: usage
        case .expired, .unsupported, .io, .cancelled: failure
        }
    }
}

/// Standard streams, raw bytes in and out (`write(2)`, never a trap: see `StandardOutput`).
package struct TerminalIO: Sendable {
    /// The process's standard streams.
    package init() {}
    /// All of stdin (at most 64 MiB, the largest credential), read without stray copies.
    package func readStdin() throws -> Data { try SecretReader.readAll(0, limit: 64 << 20, what: "stdin") }
    /// Writes `data` to stdout and returns only once all of it was written (and made durable
    /// when stdout is a regular file); throws `OutputError` otherwise. For output that must not
    /// be lost silently: `lookup` writes the value with it before anything is deleted.
    package func output(_ data: Data) throws(OutputError) { try StandardOutput.write(data) }
    /// Writes `data` to stdout. A failure is remembered: `CommandLineTool` then exits with code
    /// 3 and one line on stderr, whatever the command returned.
    package func write(_ data: Data) { try? StandardOutput.write(data) }
    /// Writes `line` and a newline to stdout, like `write`.
    package func print(_ line: String) { write(Data((line + "\n").utf8)) }
    /// Writes `credvault: LINE` to stderr as one line, its control characters escaped
    /// (`TerminalText`: a name or path in a message can neither forge a line, such as a second
    /// `credvault:` one, nor reach the terminal as an escape sequence). A failure there is
    /// ignored: it cannot be reported.
    package func error(_ line: String) { error(lines: [line]) }

    /// A message of several lines (for example a sentence, then a URL alone on its line, for
    /// scripts to pick up): the first prefixed `credvault: `, each escaped as in `error`, so the
    /// lines are exactly these, whatever text they carry.
    package func error(lines: [String]) {
        let text = lines.enumerated().map { ($0 == 0 ? "credvault: " : "") + TerminalText.escaped($1) + "\n" }.joined()
        StandardOutput.writeError(Data(text.utf8))
    }

    /// Reports a change that is already made (a vault created, re-keyed, rotated): on stderr,
    /// like `error`, so that a stdout that cannot be written never turns a committed change into
    /// a reported failure.
    package func status(_ line: String) { error(line) }
}
