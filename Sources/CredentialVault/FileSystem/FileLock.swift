#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` held on an open lock file, until `release()` or deinit.
///
/// `flock` locks belong to an open file description, so two opens conflict even inside one
/// process (two threads exclude each other like two processes), and the kernel drops the lock
/// when its holder dies (SIGKILL included): a lock is never left stale. Shared by the sealed
/// file's vault lock and the Secret Service backend's per-key locks.
package final class FileLock {
    /// The errno of a failed `flock`.
    package struct Failure: Error {
        package let code: Int32
    }

    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { release() }

    /// Releases the lock (closing the descriptor drops it). Idempotent.
    package func release() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    /// Takes the lock on `fd`, an open lock file, without waiting: the lock (which then owns
    /// `fd`), or `nil` when another holder has it. On `nil` or a failure `fd` is closed.
    package static func tryLock(_ fd: Int32) -> Result<FileLock?, Failure> {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return .success(FileLock(fd: fd)) }
            let code = errno
            if code == EINTR { continue }
            close(fd)
            return code == EWOULDBLOCK ? .success(nil) : .failure(Failure(code: code))
        }
    }
}
