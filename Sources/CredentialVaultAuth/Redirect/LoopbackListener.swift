import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP listener on 127.0.0.1 that receives the browser's redirect after sign-in
/// (RFC 8252 §7.3). It binds when created (so the port is known before the browser opens),
/// accepts connections with POSIX sockets on a Dispatch queue, answers anything that is not
/// the redirect (wrong path, no `state`/`error`) with an error status and keeps waiting, and
/// gives up at the deadline. Every connection has 5-second read and write timeouts.
public final class LoopbackListener: Sendable {
    /// The bound port.
    public let port: UInt16
    /// The redirect path.
    public let path: String
    private let socket: Mutex<Int32>
    private let logger: AuthLogger

    /// The redirect URI to register and send: `http://127.0.0.1:<port><path>`.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(path)" }

    /// Binds 127.0.0.1 on `port` (`.ephemeral`: any free port).
    /// Throws `unsupported` when the port is taken or the socket cannot be created.
    public init(port: LoopbackRedirect.Port, path: String = "/callback", logger: AuthLogger = AuthLogger()) throws(AuthError) {
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.logger = logger
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unsupported("cannot create a socket (errno \(errno))") }
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.number.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .unsupported("cannot listen on 127.0.0.1:\(port.number) (\(code == EADDRINUSE ? "port in use" : "errno \(code)"))")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: actual.sin_port)
        self.socket = Mutex(fd)
        logger.debug("loopback", "listening on 127.0.0.1:\(self.port)")
    }

    deinit { close() }

    /// Stops listening (idempotent).
    public func close() {
        socket.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    /// Waits for the redirect until `timeout` (`timedOut`) or cancellation (`cancelled`).
    /// The browser's connection is kept open until `LoopbackArrival.respond(_:)`.
    public func waitForRedirect(timeout: Duration) async throws(AuthError) -> LoopbackArrival {
        let fd = socket.withLock { $0 }
        guard fd >= 0 else { throw .cancelled }
        let flag = CancelFlag()
        let deadline = ContinuousClock.now + timeout
        let result: Result<LoopbackArrival, AuthError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(returning: self.acceptLoop(fd: fd, deadline: deadline, flag: flag))
                }
            }
        } onCancel: {
            flag.set()
        }
        return try result.get()
    }

    private func acceptLoop(fd: Int32, deadline: ContinuousClock.Instant, flag: CancelFlag) -> Result<LoopbackArrival, AuthError> {
        while true {
            if flag.isSet { return .failure(.cancelled) }
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return .failure(.timedOut) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining.secondsValue * 1000, 200).rounded(.up)))
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            if ready < 0 { return .failure(.networkError("the loopback listener failed")) }
            let client = accept(fd, nil, nil)
            if client < 0 { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let connection = LoopbackConnection(fd: client)
            guard let head = connection.readHead(until: deadline) else {
                connection.send(status: "400 Bad Request", body: "bad request")
                continue
            }
            switch classify(head) {
            case .redirect(let url):
                logger.debug("loopback", "redirect received")
                return .success(LoopbackArrival(url: url, connection: connection))
            case .reject(let status, let text):
                logger.debug("loopback", "ignored a request: \(status)")
                connection.send(status: status, body: text)
            }
        }
    }

    private enum Classification {
        case redirect(URL)
        case reject(String, String)
    }

    private func classify(_ head: String) -> Classification {
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .reject("400 Bad Request", "bad request") }
        guard parts[0] == "GET" else { return .reject("405 Method Not Allowed", "method not allowed") }
        var target = String(parts[1])
        if target.lowercased().hasPrefix("http://"), let slash = target.dropFirst(7).firstIndex(of: "/") {
            target = String(target[slash...])
        }
        guard target.hasPrefix("/"), let url = URL(string: "http://127.0.0.1:\(port)\(target)") else {
            return .reject("400 Bad Request", "bad request")
        }
        guard URLComponents(url: url, resolvingAgainstBaseURL: false)?.path == path else {
            return .reject("404 Not Found", "not found")
        }
        let parameters = FormEncoding.parameters(of: url)
        guard parameters["state"] != nil || parameters["error"] != nil else {
            return .reject("400 Bad Request", "this address only receives sign-in redirects")
        }
        return .redirect(url)
    }
}

/// The redirect the browser delivered; answer it with `respond(_:)` once the sign-in is done.
public final class LoopbackArrival: Sendable {
    /// The full redirect URL (with `code` and `state`: do not log it).
    public let url: URL
    private let connection: LoopbackConnection

    init(url: URL, connection: LoopbackConnection) {
        self.url = url
        self.connection = connection
    }

    /// Shows the browser a small page and closes the connection (later calls do nothing).
    public func respond(success: Bool, message: String? = nil) {
        respond(success ? .success : .failure(message ?? "unknown error"))
    }

    func respond(_ outcome: LoopbackPage.Outcome) {
        let status = if case .success = outcome { "200 OK" } else { "400 Bad Request" }
        connection.send(status: status, html: LoopbackPage.html(outcome))
    }
}

/// One accepted connection; closed after its single response (or when released).
final class LoopbackConnection: Sendable {
    private let fd: Mutex<Int32>

    init(fd: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = Mutex(fd)
    }

    deinit { fd.withLock { if $0 >= 0 { Glibc.close($0) } } }

    /// Reads the request head (up to 16 KiB, until the blank line); `nil` on timeout or garbage.
    func readHead(until deadline: ContinuousClock.Instant) -> String? {
        fd.withLock { fd -> String? in
            var data = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 2048)
            while data.count < 16 * 1024, ContinuousClock.now < deadline {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return nil }
                data.append(contentsOf: buffer[0..<count])
                if let text = String(bytes: data, encoding: .utf8), text.contains("\r\n\r\n") { return text }
            }
            return nil
        }
    }

    func send(status: String, body: String) { send(status: status, html: LoopbackPage.escape(body), type: "text/plain") }

    func send(status: String, html: String, type: String = "text/html") {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            let body = Array(html.utf8)
            let head = "HTTP/1.1 \(status)\r\nContent-Type: \(type); charset=utf-8\r\nContent-Length: \(body.count)\r\n"
                + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
            var bytes = Array(head.utf8) + body
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
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
