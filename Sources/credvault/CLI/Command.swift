import CredentialVault
import Foundation

/// One `credvault` subcommand.
protocol Command: Sendable {
    /// The word that selects it.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }
    /// Flags and options it accepts besides the common ones.
    static var flags: Set<String> { get }
    static var options: Set<String> { get }
    /// Runs it; returns the exit code.
    static func run(_ arguments: ParsedArguments, _ io: TerminalIO) throws -> Int32
}

/// Exit codes (stable, documented in the README).
enum ExitCode {
    static let success: Int32 = 0
    static let notFound: Int32 = 1
    static let usage: Int32 = 2
    static let failure: Int32 = 3
    static let wrongKey: Int32 = 4
    static let damaged: Int32 = 5
    static let deviceMismatch: Int32 = 6
    static let busy: Int32 = 7
    static let notAvailable: Int32 = 8
    static let permission: Int32 = 9
    static let locked: Int32 = 10
    /// `credvault auth`: the provider refused (invalid grant, wrong client secret, denied...).
    static let authFailed: Int32 = 11
    /// `credvault auth`: the provider could not be reached or did not answer in time.
    static let unreachable: Int32 = 12

    static func of(_ error: CredentialVaultError) -> Int32 {
        switch error {
        case .wrongPassphrase: wrongKey
        case .corrupted, .tampered: damaged
        case .deviceMismatch: deviceMismatch
        case .busy, .timedOut: busy
        case .notAvailable: notAvailable
        case .permissionDenied: permission
        case .locked: locked
        case .invalidArgument: usage
        case .expired, .unsupported, .io: failure
        }
    }
}

/// Standard streams, raw bytes in and out.
struct TerminalIO {
    func readStdin() -> Data { FileHandle.standardInput.readDataToEndOfFile() }
    func write(_ data: Data) { FileHandle.standardOutput.write(data) }
    func print(_ line: String) { write(Data((line + "\n").utf8)) }
    func error(_ line: String) { FileHandle.standardError.write(Data(("credvault: " + line + "\n").utf8)) }
}
