#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSodium

#if canImport(Glibc)
import Glibc
#endif

/// Process-wide protection of the secrets an application holds in ordinary memory (the `Data`
/// a `load` returns, strings made from it), which the library cannot keep in guarded memory.
///
/// Call `disableCoreDumps()` once, first thing in `main`, before any secret is read; the
/// `credvault` executables do. What it covers, exactly (Linux):
/// - `setrlimit(RLIMIT_CORE, 0)`: a crash writes no core file where `core_pattern` is a file.
///   The limit is inherited by child processes and kept across `execve`.
/// - `prctl(PR_SET_DUMPABLE, 0)`: no core dump at all, whatever `core_pattern` says (a pipe to
///   `systemd-coredump` too) and whatever `fs.suid_dumpable` is; `/proc/PID/mem`, `environ`,
///   `maps` and the other files that need ptrace access become root's, so other processes of
///   the same user can neither read this process's memory (through them or
///   `process_vm_readv`) nor `ptrace` it. `execve` resets the flag (a program this process
///   executes must call this again), and so does a change of the process's user or group ids
///   (to `fs.suid_dumpable`).
///
/// What it does not cover: root or any process with `CAP_SYS_PTRACE`, which can still read the
/// memory; swap and hibernation images (values are ordinary memory; the library's keys are
/// `mlock`ed); secrets written elsewhere by the application itself; and the moment between
/// `execve` and this call: a process of the same user that opened `/proc/PID/mem` or attached
/// with ptrace in that window keeps its access (check with `refuseIfTraced()` for ptrace). Only
/// an executable the user cannot read (installed mode 0711) is non-dumpable from `execve` on,
/// by the kernel, with no window.
public enum ProcessHardening {
    /// Makes this process non-dumpable and sets its core file size limit (soft and hard) to 0.
    /// Throws `unsupported` naming the call the system refused; the other one has been applied.
    public static func disableCoreDumps() throws(CredentialVaultError) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        let limited = setrlimit(coreLimit, &none) == 0 ? 0 : errno
        let undumpable = credvault_set_dumpable(0) == 0 ? 0 : errno
        if limited != 0 { throw .unsupported("cannot disable core dumps: setrlimit(RLIMIT_CORE): \(describe(limited))") }
        if undumpable != 0 {
            throw .unsupported("cannot disable core dumps: prctl(PR_SET_DUMPABLE): \(describe(undumpable))")
        }
    }

    /// Throws `unsupported` when a tracer (a debugger, `strace`, a same-user process that
    /// attached before `disableCoreDumps()`) is attached to this process (`TracerPid` in
    /// `/proc/self/status`), so that no secret is handled under it.
    public static func refuseIfTraced() throws(CredentialVaultError) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return }
        for line in status.split(separator: "\n") where line.hasPrefix("TracerPid:") {
            let pid = PlainText.trimmed(line.dropFirst("TracerPid:".count))
            if pid != "0" { throw .unsupported("process \(pid) is tracing this one (a debugger or strace)") }
        }
    }

    /// Whether core dumps are off in this process: it is not dumpable and its core size limit
    /// is 0 (what `disableCoreDumps()` sets).
    public static var coreDumpsDisabled: Bool {
        var limit = rlimit()
        guard getrlimit(coreLimit, &limit) == 0 else { return false }
        return credvault_get_dumpable() == 0 && limit.rlim_cur == 0 && limit.rlim_max == 0
    }

    private static let coreLimit = __rlimit_resource_t(RLIMIT_CORE.rawValue)

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
