#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The names under which `credvault` is a credential helper: installed as a link
/// `git-credential-credvault` (what `git config credential.helper credvault` runs) or
/// `docker-credential-credvault` (what `"credsStore": "credvault"` runs) to the same
/// executable, it runs `credvault git-credential ...` or `credvault docker-credential ...`.
/// A link, not another executable: one binary to install and update, and the lean one keeps
/// its start-up time. The hand-over to `credvault-full` keeps `argv[0]`, so the full one reads
/// the same name.
enum ProgramName {
    /// Program names (the last component of `argv[0]`) and the command each one runs.
    static let helpers: [String: String] = [
        "git-credential-credvault": GitCredentialCommand.name,
        "docker-credential-credvault": DockerCredentialCommand.name,
    ]

    /// `arguments` (those after the program name) as `credvault` takes them: the helper's
    /// command first when the program was run under a helper's name.
    static func arguments(_ arguments: [String]) -> [String] {
        guard CommandLine.argc > 0, let pointer = CommandLine.unsafeArgv[0] else { return arguments }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)).bindMemory(to: UInt8.self)
        let path = String(decoding: bytes, as: UTF8.self)
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let command = helpers[name] else { return arguments }
        return [command] + arguments
    }
}
