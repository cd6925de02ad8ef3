#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` held on an open lock file, until `release()` or deinit.
///
/// `flock` locks belong to an open file description, so two opens conflict even inside one
/// process (two threads exclude each other like two processes), and the kernel drops the lock
/// when its holder dies (SIGKILL included): a lock is never left stale. Shared by the sealed
/// file's vault lock and the Secret Service backend's per-key locks.
///
/// A lock on a file that no longer has its name is worth nothing: a process that opens the name
/// afterwards gets another file and another lock. So a lock is kept only when, once `flock`
/// succeeded, the file still has a name (and, when the caller gives it, still is the file of
/// that name: same device and inode); else it is `stale` and the caller opens the name again.
package final class FileLock: @unchecked Sendable {
    /// The errno of a failed `flock` or `fstat`.
    package struct Failure: Error {
        package let code: Int32
    }

    /// What one attempt to lock an open file gave.
    package enum Attempt {
        /// Locked, and the file still is the one named.
        case locked(FileLock)
        /// Another holder has it.
        case held
        /// Locked a file that lost its name (removed or replaced meanwhile): released; open again.
        case stale
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
    /// `fd`), or `nil` when another holder has it or the file lost its name meanwhile (then the
    /// caller's next attempt opens the name again). On `nil` or a failure `fd` is closed.
    package static func tryLock(_ fd: Int32) -> Result<FileLock?, Failure> {
        attempt(fd, named: nil, in: AT_FDCWD).map { if case .locked(let lock) = $0 { lock } else { nil } }
    }

    /// Takes the lock on `fd` without waiting, then checks that the locked file still has a name
    /// and, with `name`, that it is the file `name` in the directory `directoryFD` (`fstat` of
    /// `fd` against `fstatat` of the name, not following a link: same device and inode). The
    /// lock owns `fd` when `.locked`; otherwise (and on a failure) `fd` is closed.
    package static func attempt(_ fd: Int32, named name: String?, in directoryFD: Int32) -> Result<Attempt, Failure> {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            return code == EWOULDBLOCK ? .success(.held) : .failure(Failure(code: code))
        }
        var held = stat()
        guard fstat(fd, &held) == 0 else {
            let code = errno
            close(fd)
            return .failure(Failure(code: code))
        }
        var current = held
        if let name, fstatat(directoryFD, name, &current, AT_SYMLINK_NOFOLLOW) != 0 {
            let code = errno
            close(fd)
            return code == ENOENT ? .success(.stale) : .failure(Failure(code: code))
        }
        guard held.st_nlink > 0, current.st_dev == held.st_dev, current.st_ino == held.st_ino else {
            close(fd)
            return .success(.stale)
        }
        return .success(.locked(FileLock(fd: fd)))
    }

    /// Locks `fd`, a file created for this purpose that nobody else can have open yet (a temp
    /// file about to be renamed into place): the lock then owns `fd`. `nil` (and `fd` left
    /// open, the caller's) when `flock` fails.
    static func lockNew(_ fd: Int32) -> FileLock? {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno != EINTR { return nil }
        }
        return FileLock(fd: fd)
    }
}
