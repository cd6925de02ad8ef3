import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a separate lock file (`<vault>.lock`), held with `flock`.
///
/// `flock` locks belong to an open file description, so two opens conflict even inside one
/// process, and the kernel drops the lock when its holder dies (SIGKILL included): a lock is
/// never left stale. Waiting is bounded: past the deadline the caller gets `busy`, never a hang.
final class VaultLock {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { release() }

    /// Releases the lock (closing the descriptor drops it).
    func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    /// Tries once; `nil` when another holder has it.
    private static func tryAcquire(_ path: String) throws(CredentialVaultError) -> VaultLock? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFiles.error(errno, "cannot open the lock file \(path)") }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return VaultLock(fd: fd) }
        let code = errno
        close(fd)
        if code == EWOULDBLOCK || code == EINTR { return nil }
        throw PrivateFiles.error(code, "cannot lock \(path)")
    }

    /// Acquires the lock, polling with a growing pause (0.5 ms up to 20 ms) until `timeout`.
    static func acquire(_ path: String, timeout: Duration) throws(CredentialVaultError) -> VaultLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        while true {
            if let lock = try tryAcquire(path) { return lock }
            if ContinuousClock.now >= deadline { throw .busy }
            Thread.sleep(forTimeInterval: pause.timeInterval)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// Async form: the same bounded polling, suspending instead of blocking a thread.
    static func acquire(_ path: String, timeout: Duration) async throws(CredentialVaultError) -> VaultLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        while true {
            if let lock = try tryAcquire(path) { return lock }
            if ContinuousClock.now >= deadline { throw .busy }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }
}
