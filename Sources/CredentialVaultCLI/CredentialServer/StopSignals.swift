import CredentialVault
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM, SIGINT and SIGHUP taken by a thread of their own instead of killing the process,
/// so that the server's `poll` loop ends cleanly (removing its socket) and a long command stops
/// between two steps, when systemd or a terminal stops them.
///
/// The signals are blocked in the calling thread, which every thread started afterwards
/// inherits, and the signal thread takes the first with `sigwait`; later ones stay blocked
/// (SIGKILL and SIGQUIT still end the process at once). Call it before any other thread is
/// started, or such a thread could take the signal with its default action.
package enum StopSignals {
    /// Returns a pipe's read end: readable once a stop signal arrived.
    static func install() throws(CredentialVaultError) -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .io("cannot create a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let writeEnd = ends[1]
        try take { _ in
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
        return ends[0]
    }

    /// Calls `action` with the first stop signal, on the signal thread, when it arrives.
    package static func take(_ action: @escaping @Sendable (Int32) -> Void) throws(CredentialVaultError) {
        var set = signals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let started = PlainThread.start(stackSize: 64 << 10) {
            var set = signals()
            var signal: Int32 = 0
            while sigwait(&set, &signal) != 0 {}
            action(signal)
        }
        guard started else { throw .io("cannot start the signal thread") }
    }

    private static func signals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        return set
    }
}
