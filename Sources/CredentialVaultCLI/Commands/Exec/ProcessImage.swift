#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Replaces this process with a command (`execve`), its environment this process's plus the
/// given variables, which hold secrets and are wiped if the command cannot be run.
///
/// Why `execve` and no child process: the command becomes this process (same PID), so every
/// signal sent to it, all of them, SIGKILL and job control included, reaches the command itself
/// with nothing to forward or lose; its exit status, a death by signal included, is the one
/// the caller sees, unchanged; and nothing can be left behind when either is killed, as there
/// is only one process. `credvault` has nothing left to do once the command runs, and its
/// memory (the vault's keys and contents) is gone with the old image. No Swift code runs in a
/// forked child: there is none.
///
/// What the command inherits besides: the descriptors without close-on-exec (its standard
/// streams, those the caller passed, the `--fd` files; every descriptor the library opens is
/// close-on-exec), `SIGPIPE` as `credvault` found it (`InheritedSignals`), the signal mask,
/// and `credvault`'s core-dump limit of 0 (`ProcessHardening`: it cannot be raised again, and
/// the command holds the same secrets).
enum ProcessImage {
    /// How running the command failed (it returns only then).
    struct Failure: Error {
        /// The `errno` of the last `execve`.
        let code: Int32
        /// Whether the command was found at all (`ENOENT` everywhere on `PATH` otherwise).
        let found: Bool
    }

    /// Runs `command` (looked up on this process's `PATH` when it holds no `/`, as `execvp`
    /// does, without its fallback of running a file without `#!` through `/bin/sh`) with the
    /// environment of this process, minus the variables named in `variables` or in `unset`,
    /// plus `variables` (`NAME=VALUE`, raw bytes). `unset` names the variables the caller was
    /// asked to set but leaves unset (an optional credential that is missing): a value this
    /// process inherited under that name must not reach the command in its place. Returns only
    /// when no `execve` succeeded.
    static func replace(with command: [String], variables: [(name: String, value: Data)], unset: [String] = []) -> Failure {
        let names = Set((variables.map(\.name) + unset).map { Array($0.utf8) })
        var environment: [UnsafeMutablePointer<CChar>?] = []
        var owned: [(UnsafeMutablePointer<CChar>, Int)] = []
        defer {
            // Reached only when the command could not be run: the values are wiped.
            for (pointer, size) in owned {
                memset(pointer, 0, size)
                free(pointer)
            }
        }
        if let inherited = Optional(environ) {
            var index = 0
            while let entry = inherited[index] {
                index += 1
                let name = UnsafeRawBufferPointer(start: entry, count: strlen(entry)).prefix { $0 != 0x3D }
                if !names.contains(Array(name)) { environment.append(entry) }
            }
        }
        for (name, value) in variables {
            let size = name.utf8.count + 1 + value.count + 1
            guard let pointer = malloc(size)?.bindMemory(to: CChar.self, capacity: size) else { return Failure(code: ENOMEM, found: true) }
            owned.append((pointer, size))
            let raw = UnsafeMutableRawBufferPointer(start: pointer, count: size)
            raw.copyBytes(from: Array(name.utf8) + [0x3D])
            value.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: raw[(name.utf8.count + 1)...]).copyMemory(from: $0) }
            raw[size - 1] = 0
            environment.append(pointer)
        }
        environment.append(nil)
        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        InheritedSignals.restoreBrokenPipes()
        defer { InheritedSignals.ignoreBrokenPipes() }
        return environment.withUnsafeBufferPointer { envp in
            arguments.withUnsafeBufferPointer { argv in
                execute(command[0], argv.baseAddress!, envp.baseAddress!)
            }
        }
    }

    /// `execve` of `name`, or of each `DIR/name` on `PATH` in turn, as `execvp` does: past a
    /// file that is missing or not permitted to the next one; any other failure is final.
    private static func execute(
        _ name: String, _ argv: UnsafePointer<UnsafeMutablePointer<CChar>?>, _ envp: UnsafePointer<UnsafeMutablePointer<CChar>?>
    ) -> Failure {
        if name.contains("/") {
            execve(name, argv, envp)
            return Failure(code: errno, found: errno != ENOENT)
        }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        var denied = false
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            execve(candidate, argv, envp)
            switch errno {
            case EACCES: denied = true
            case ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG: break
            default: return Failure(code: errno, found: true)
            }
        }
        return Failure(code: denied ? EACCES : ENOENT, found: denied)
    }
}
