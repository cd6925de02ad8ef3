import CredentialVault
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM, SIGINT and SIGHUP turned into a readable descriptor, so that the server's `poll`
/// loop ends cleanly (removing its socket) when systemd or a terminal stops it.
///
/// The signals are blocked in the calling thread, which every thread started afterwards
/// inherits, and a thread of its own takes them with `sigwait` and writes one byte to a pipe.
/// Call it before any other thread is started, or such a thread could take the signal with
/// its default action.
enum StopSignals {
    /// Returns the pipe's read end: readable once a stop signal arrived.
    static func install() throws(CredentialVaultError) -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .io("cannot create a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var set = signals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let writeEnd = ends[1]
        let started = PlainThread.start(stackSize: 64 << 10) {
            var set = signals()
            var signal: Int32 = 0
            while sigwait(&set, &signal) != 0 {}
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
        guard started else { throw .io("cannot start the signal thread") }
        return ends[0]
    }

    private static func signals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        return set
    }
}
