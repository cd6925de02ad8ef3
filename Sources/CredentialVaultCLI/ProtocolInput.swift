#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// What a credential helper reads from its client (git, docker) on stdin: bounded in size and
/// in time, so a hostile or stuck client gets an error, never a helper that grows without end
/// or waits forever. The bytes may hold a secret: the one buffer is wiped by its reader.
enum ProtocolInput {
    /// The longest wait for the next byte before giving up.
    static let idleDeadlineMillis: Int32 = 60_000
    /// The longest a whole request may take (a client sending a byte a minute never reaches
    /// the idle deadline, and would hold the helper for hours).
    static let totalDeadlineMillis: Int64 = 300_000

    /// Reads stdin up to its end, or (with `untilBlankLine`) up to and including the first empty
    /// line (git's protocol ends a request with one, and a client may keep stdin open after
    /// it); at most `limit` bytes. Throws `UsageError` (naming `what`, never quoting the bytes)
    /// when there is more, when stdin cannot be read, when nothing arrives for a minute, or when
    /// the whole of it has not arrived within five minutes.
    ///
    /// `fd`, `idleMillis` and `totalMillis` are the tests' to choose (stdin, a minute and five
    /// minutes otherwise).
    static func read(
        from fd: Int32 = 0, limit: Int, untilBlankLine: Bool, what: String, idleMillis: Int32 = idleDeadlineMillis,
        totalMillis: Int64 = totalDeadlineMillis
    ) throws(UsageError) -> Data {
        let deadline = ContinuousClock.now + .milliseconds(totalMillis)
        // One buffer of the largest size, never grown: no copy of a secret is left behind.
        var buffer = Data(count: limit + 1)
        var length = 0
        func fail(_ message: String) -> UsageError {
            buffer.resetBytes(in: 0..<buffer.count)
            return UsageError(message)
        }
        while length <= limit {
            if untilBlankLine && endsRequest(buffer, length) { break }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw fail("the \(what) did not arrive on stdin within \(Double(totalMillis) / 1000) seconds") }
            let leftMillis = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(clamping: min(Int64(idleMillis), leftMillis)))
            if polled < 0 && errno == EINTR { continue }
            if polled == 0 {
                if ContinuousClock.now >= deadline { continue }  // the overall deadline, said above
                throw fail("no \(what) on stdin for \(Double(idleMillis) / 1000) seconds")
            }
            // A chunk at a time; with `untilBlankLine` one byte at a time, so that nothing after
            // the request is consumed (it is not ours).
            let room = untilBlankLine ? 1 : limit + 1 - length
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, room) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw fail("cannot read the \(what) from stdin: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            length += n
        }
        guard length <= limit else { throw fail("the \(what) is longer than \(limit) bytes") }
        let result = Data(buffer[..<length])  // the caller wipes it
        buffer.resetBytes(in: 0..<buffer.count)
        return result
    }

    /// Whether the first `length` bytes end with an empty line: `\n` alone at the start, or
    /// `\n\n` / `\n\r\n`.
    private static func endsRequest(_ buffer: Data, _ length: Int) -> Bool {
        guard length > 0, buffer[length - 1] == 0x0A else { return false }
        if length == 1 { return true }
        if buffer[length - 2] == 0x0A { return true }
        if length == 2 { return buffer[0] == 0x0D }
        return buffer[length - 2] == 0x0D && buffer[length - 3] == 0x0A
    }
}
