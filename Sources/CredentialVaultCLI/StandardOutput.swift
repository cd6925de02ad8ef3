#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The process's stdout and stderr, written with `write(2)` directly: every byte or a typed
/// error, never a trap (`FileHandle.write` traps on `EPIPE`, `ENOSPC`, `EBADF`...), never a
/// `SIGPIPE` death (the executables ignore `SIGPIPE`, see `CommandLineTool.main`).
///
/// The first failed write to stdout is remembered: later writes are skipped, and
/// `CommandLineTool` turns it into exit code 3 with one line on stderr, so a command that
/// printed into a broken pipe or a full disk never reports success.
package enum StandardOutput {
    /// The `errno` of the first failed write to stdout, if any.
    static var failure: Int32? { firstFailure.withLock { $0 } }

    private static let firstFailure = Mutex<Int32?>(nil)

    /// Writes all of `data` to stdout and makes it durable when stdout is a regular file
    /// (`fdatasync`: a full disk can show only then). Throws `OutputError` (and remembers it).
    static func write(_ data: Data) throws(OutputError) {
        if let code = failure { throw OutputError(code) }
        let code = data.withUnsafeBytes { writeAll(1, $0) } ?? flushIfFile(1)
        if let code {
            firstFailure.withLock { $0 = $0 ?? code }
            throw OutputError(code)
        }
    }

    /// Writes all of `data` to stderr; a failure there cannot be reported and is ignored.
    package static func writeError(_ data: Data) {
        _ = data.withUnsafeBytes { writeAll(2, $0) }
    }

    /// How long a write may wait for a non-blocking stdout to drain before it fails (`EAGAIN`).
    static let drainDeadlineMillis: Int32 = 30_000

    /// Opens `/dev/null` (read-only: writes to it fail with `EBADF`, as to a closed descriptor)
    /// on each of descriptors 0, 1 and 2 that is closed, so that no later open reuses them.
    static func reserveStandardDescriptors() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let null = open("/dev/null", O_RDONLY)
            if null >= 0 && null != fd {
                _ = dup2(null, fd)
                close(null)
            }
        }
    }

    /// Writes every byte, retrying after `EINTR` and partial writes, and waiting (bounded) for
    /// a non-blocking descriptor to drain after `EAGAIN`; the `errno` of a failure.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    // A stdout inherited in non-blocking mode (Node.js, asyncio): wait for room.
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    let polled = poll(&ready, 1, drainDeadlineMillis)
                    if polled > 0 || (polled < 0 && errno == EINTR) { continue }
                    return polled == 0 ? ETIMEDOUT : errno
                }
                return errno
            }
            if n == 0 { return EIO }
            done += n
        }
        return nil
    }

    /// `fdatasync` of a regular file (a pipe or terminal has nothing to flush); its `errno`.
    private static func flushIfFile(_ fd: Int32) -> Int32? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        while fdatasync(fd) != 0 {
            if errno != EINTR { return errno }
        }
        return nil
    }
}

/// Stdout could not be written (`EPIPE`: the reader is gone; `ENOSPC`; `EBADF`: closed...).
package struct OutputError: Error, Sendable, CustomStringConvertible {
    /// The `errno` of the failed write.
    package let code: Int32

    /// Wraps an `errno`.
    package init(_ code: Int32) { self.code = code }

    /// "cannot write to stdout: REASON".
    package var description: String { "cannot write to stdout: \(String(cString: strerror(code)))" }
}
