import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One accepted connection of the loopback listener; closed after its single response (or
/// when released). Reads wait with `poll` against a deadline for the first byte and one for
/// the whole request, so neither an idle client nor one sending a byte at a time can hold it
/// longer; writes have a 5-second timeout.
final class LoopbackConnection: Sendable {
    private let fd: Mutex<Int32>

    init(fd: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = Mutex(fd)
    }

    deinit { fd.withLock { if $0 >= 0 { Glibc.close($0) } } }

    /// What reading the request head gave.
    enum Head {
        case head(String)
        case tooLarge
        case timedOut
        case closed
    }

    /// Reads the request head (until the blank line): its first byte by `firstByte`, all of it
    /// by `deadline`, at most `limit` bytes.
    func readHead(firstByteBy firstByte: ContinuousClock.Instant, until deadline: ContinuousClock.Instant, limit: Int) -> Head {
        fd.withLock { fd -> Head in
            var data = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 2048)
            while true {
                let remaining = (data.isEmpty ? min(firstByte, deadline) : deadline) - ContinuousClock.now
                guard remaining > .zero else { return .timedOut }
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(max(remaining.secondsValue * 1000, 1).rounded(.up)))
                if ready == 0 || (ready < 0 && errno == EINTR) { continue }
                guard ready > 0 else { return .closed }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                guard count > 0 else { return .closed }
                data.append(contentsOf: buffer[0..<count])
                if let end = Self.headEnd(data) {
                    return end <= limit ? .head(String(decoding: data[..<end], as: UTF8.self)) : .tooLarge
                }
                if data.count > limit { return .tooLarge }
            }
        }
    }

    /// The index just past the blank line ending the head, if it has arrived.
    private static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 3..<data.count where data[index - 3] == 13 && data[index - 2] == 10 && data[index - 1] == 13 && data[index] == 10 {
            return index + 1
        }
        return nil
    }

    func send(status: String, body: String) { send(status: status, html: LoopbackPage.escape(body), type: "text/plain") }

    func send(status: String, html: String, type: String = "text/html") {
        write(status: status, headers: "Content-Type: \(type); charset=utf-8\r\n", body: Array(html.utf8))
    }

    /// A 302 to `url` (a start page's authorization URL).
    func redirect(to url: URL) {
        write(status: "302 Found", headers: "Location: \(url.absoluteString)\r\n", body: [])
    }

    /// Closes without answering.
    func discard() {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    private func write(status: String, headers: String, body: [UInt8]) {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            let head = "HTTP/1.1 \(status)\r\n\(headers)Content-Length: \(body.count)\r\n"
                + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
            let bytes = Array(head.utf8) + body
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { break }
                offset += sent
            }
            shutdown(fd, Int32(SHUT_WR))
            Glibc.close(fd)
            fd = -1
        }
    }
}

/// A flag set from a cancellation handler and polled by the accept loop.
final class CancelFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
