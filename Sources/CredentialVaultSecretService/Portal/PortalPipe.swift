import CLibSecret
import CredentialVault
import Glibc

/// The pipe the Secret portal writes the application's secret into: opened with `O_CLOEXEC`
/// (a child process started meanwhile inherits neither end), its read end non-blocking so that
/// every read is bounded by a deadline (`poll`).
///
/// The write end goes to the portal as a Unix fd (`appendWriteEnd`, which duplicates it), and
/// our own copy is closed at once: the read sees end-of-file only when no writer is left, so a
/// copy kept here would make a short secret wait for the deadline instead of being reported.
final class PortalPipe {
    /// Exactly what the portal sends: 64 random bytes per application.
    static let secretLength = 64

    private var readEnd: Int32
    private var writeEnd: Int32

    /// A new pipe; `io` when the system refuses one (out of file descriptors).
    init() throws(CredentialVaultError) {
        var fds: [Int32] = [-1, -1]
        // pipe2(O_CLOEXEC) underneath: no moment when another thread's fork could inherit it.
        // (glib before 2.78 takes FD_CLOEXEC only, and means O_CLOEXEC by it.)
        var opened: gboolean = 0
        do throws(GLibError) {
            opened = try withGError { g_unix_open_pipe(&fds, FD_CLOEXEC, $0) }
        } catch {
            throw .io("cannot make a pipe for the Secret portal (\(error.message))")
        }
        guard opened != 0, fds[0] >= 0, fds[1] >= 0 else { throw .io("cannot make a pipe for the Secret portal") }
        readEnd = fds[0]
        writeEnd = fds[1]
        // Only our end is non-blocking (the portal's stays as a writer expects).
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
    }

    /// A new `GUnixFDList` holding a duplicate of the write end (handle 0 of the call), and our
    /// own write end closed. The caller unrefs the list once the call is sent.
    func handOverWriteEnd() throws(CredentialVaultError) -> UnsafeMutablePointer<GUnixFDList> {
        let list = g_unix_fd_list_new()!
        var index: Int32 = -1
        do throws(GLibError) {
            index = try withGError { g_unix_fd_list_append(list, writeEnd, $0) }
        } catch {
            g_object_unref(UnsafeMutableRawPointer(list))
            throw .io("cannot pass the pipe to the Secret portal (\(error.message))")
        }
        guard index == 0 else {
            g_object_unref(UnsafeMutableRawPointer(list))
            throw .io("cannot pass the pipe to the Secret portal")
        }
        closeWriteEnd()
        return list
    }

    /// Closes our copy of the write end (idempotent).
    func closeWriteEnd() {
        if writeEnd >= 0 { close(writeEnd) }
        writeEnd = -1
    }

    /// Reads the secret: exactly `secretLength` bytes, then end-of-file or nothing more for now.
    /// Fewer bytes before end-of-file, or any byte beyond them, is `io` (naming the count, never
    /// a byte); no end in sight by `end` is `timedOut`; `cancelled()` true is `cancelled`.
    func readSecret(until end: ContinuousClock.Instant, cancelled: () -> Bool) throws(CredentialVaultError) -> SecureBytes {
        let secret = SecureBytes(count: Self.secretLength)
        var filled = 0
        var ended = false
        try secret.withUnsafeMutableBytes { (buffer) throws(CredentialVaultError) in
            while filled < Self.secretLength {
                let got = read(readEnd, buffer.baseAddress! + filled, Self.secretLength - filled)
                if got > 0 {
                    filled += got
                } else if got == 0 {
                    ended = true
                    break
                } else if errno == EAGAIN || errno == EINTR {
                    try wait(until: end, cancelled: cancelled)
                } else {
                    throw .io("cannot read the Secret portal's pipe (errno \(errno))")
                }
            }
        }
        guard filled == Self.secretLength else {
            throw .io("the Secret portal sent \(filled) bytes, not \(Self.secretLength): it is not the portal this library knows")
        }
        if !ended {
            // One more byte, without waiting: the portal wrote its secret before it answered.
            var extra: UInt8 = 0
            if read(readEnd, &extra, 1) > 0 {
                throw .io("the Secret portal sent more than \(Self.secretLength) bytes: it is not the portal this library knows")
            }
        }
        return secret
    }

    /// Waits (in slices of at most 50 ms, to see `cancelled`) until the read end is readable.
    private func wait(until end: ContinuousClock.Instant, cancelled: () -> Bool) throws(CredentialVaultError) {
        while true {
            if cancelled() { throw .cancelled }
            let left = ContinuousClock.now.duration(to: end)
            guard left > .zero else { throw .timedOut }
            // The slice first: `end` may be "no limit" (`.seconds(Int64.max)`), whose
            // milliseconds overflow.
            let slice = min(left, .milliseconds(50)).components
            let milliseconds = Int32(slice.seconds * 1000 + slice.attoseconds / 1_000_000_000_000_000 + 1)
            var request = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .io("cannot wait for the Secret portal's pipe (errno \(errno))") }
        }
    }

    deinit {
        closeWriteEnd()
        close(readEnd)
    }
}
