import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP listener on 127.0.0.1 that receives the browser's redirect after sign-in
/// (RFC 8252 §7.3). It binds when created (so the port is known before the browser opens)
/// and serves connections with POSIX sockets on Dispatch threads, several at once (at most
/// `maximumConnections`), each within a whole-request deadline and a size limit. Only the
/// redirect that carries the pending sign-in's `state` ends the wait: any other request (a
/// wrong path, a forged `state`, an `error` without the state, an `<img>` on some web page)
/// gets an error page and the wait goes on, until the deadline.
///
/// It also serves one-time start pages (`startURL(redirectingTo:)`): the browser is opened
/// at `http://127.0.0.1:<port>/start/<random>`, which redirects it to the authorization URL
/// once, so that no command line (`xdg-open`'s, readable in `/proc` by other local users)
/// carries the `state` or the PKCE challenge.
public final class LoopbackListener: Sendable {
    /// The bound port.
    public let port: UInt16
    /// The redirect path.
    public let path: String
    /// The deadline of one connection's whole request (default 5 s).
    let requestTimeout: Duration
    /// The largest request head accepted (16 KiB); larger ones are answered 431.
    static let maximumRequestSize = 16 * 1024
    /// The most connections served at once; more are closed at once.
    static let maximumConnections = 16

    private let socket: Mutex<Int32>
    private let startPages = Mutex<(pending: [String: URL], used: Set<String>)>(([:], []))
    private let active = Atomic<Int>(0)
    let logger: AuthLogger

    /// The redirect URI to register and send: `http://127.0.0.1:<port><path>`.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(path)" }

    /// Binds 127.0.0.1 on `port` (`.ephemeral`: any free port).
    /// Throws `unsupported` when the port is taken or the socket cannot be created.
    public convenience init(port: LoopbackRedirect.Port, path: String = "/callback", logger: AuthLogger = AuthLogger()) throws(AuthError) {
        try self.init(port: port, path: path, logger: logger, requestTimeout: .seconds(5))
    }

    init(port: LoopbackRedirect.Port, path: String, logger: AuthLogger, requestTimeout: Duration) throws(AuthError) {
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.logger = logger
        self.requestTimeout = requestTimeout
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
        guard bound == 0, listen(fd, 64) == 0 else {
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

    /// A one-time URL on this listener that redirects the browser to `url` (served while a
    /// wait is running). Open the browser with this instead of `url`, which carries `state`
    /// and the PKCE challenge. A second request for it means someone else used it first (it
    /// may have been read off a command line): the wait then ends with `stateMismatch`.
    public func startURL(redirectingTo url: URL) -> URL {
        let token = SecureRandom.token()
        startPages.withLock { $0.pending[token] = url }
        return URL(string: "http://127.0.0.1:\(port)/start/\(token)")!
    }

    /// What a request for the start page `token` gets.
    enum StartPage {
        case first(URL)
        case replayed
        case unknown
    }

    /// Takes (single use) the start page `token` names.
    func takeStartPage(_ token: String) -> StartPage {
        startPages.withLock { pages in
            if let url = pages.pending.removeValue(forKey: token) {
                pages.used.insert(token)
                return .first(url)
            }
            return pages.used.contains(token) ? .replayed : .unknown
        }
    }

    /// Waits until the redirect carrying `state` arrives (`timedOut` at the deadline,
    /// `cancelled` on cancellation); requests without it get an error page meanwhile. The
    /// browser's connection is kept open until `LoopbackArrival.respond(_:)`.
    public func waitForRedirect(state: String, timeout: Duration) async throws(AuthError) -> LoopbackArrival {
        try await wait(expecting: state, timeout: timeout)
    }

    /// Waits for the first request to the redirect path with a `state` or an `error`,
    /// whatever its value. Prefer `waitForRedirect(state:timeout:)`: with this one, any local
    /// process or web page can end the wait with a forged redirect.
    public func waitForRedirect(timeout: Duration) async throws(AuthError) -> LoopbackArrival {
        try await wait(expecting: nil, timeout: timeout)
    }

    private func wait(expecting state: String?, timeout: Duration) async throws(AuthError) -> LoopbackArrival {
        let fd = socket.withLock { $0 }
        guard fd >= 0 else { throw .cancelled }
        let flag = CancelFlag()
        let deadline = ContinuousClock.now + timeout
        let result: Result<LoopbackArrival, AuthError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(returning: self.acceptLoop(fd: fd, deadline: deadline, flag: flag, state: state))
                }
            }
        } onCancel: {
            flag.set()
        }
        return try result.get()
    }

    /// Accepts connections and hands each to a Dispatch thread of its own, until a matching
    /// redirect has arrived, the deadline passes or the wait is cancelled.
    private func acceptLoop(
        fd: Int32, deadline: ContinuousClock.Instant, flag: CancelFlag, state: String?
    ) -> Result<LoopbackArrival, AuthError> {
        let outcome = ArrivalSlot()
        while true {
            if let result = outcome.result { return result }
            if flag.isSet { return .failure(.cancelled) }
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return .failure(.timedOut) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining.secondsValue * 1000, 50).rounded(.up)))
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            if ready < 0 || descriptor.revents & Int16(POLLNVAL | POLLERR) != 0 {
                return .failure(.networkError("the loopback listener failed"))
            }
            let client = accept(fd, nil, nil)
            if client < 0 { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            guard active.add(1, ordering: .relaxed).newValue <= Self.maximumConnections else {
                active.subtract(1, ordering: .relaxed)
                Glibc.close(client)
                continue
            }
            let connection = LoopbackConnection(fd: client)
            let requestDeadline = min(deadline, ContinuousClock.now + requestTimeout)
            DispatchQueue.global().async {
                defer { self.active.subtract(1, ordering: .relaxed) }
                self.serve(connection, until: requestDeadline, expecting: state, into: outcome)
            }
        }
    }

    /// Reads one request and answers it, or hands it over as the arrival.
    private func serve(_ connection: LoopbackConnection, until deadline: ContinuousClock.Instant, expecting state: String?, into outcome: ArrivalSlot) {
        let head: String
        switch connection.readHead(until: deadline, limit: Self.maximumRequestSize) {
        case .head(let text): head = text
        case .tooLarge: return connection.send(status: "431 Request Header Fields Too Large", body: "request too large")
        case .timedOut: return connection.send(status: "408 Request Timeout", body: "request timeout")
        case .closed: return connection.discard()
        }
        switch classify(head) {
        case .redirect(let url):
            guard state.map({ Self.carries(url, state: $0) }) ?? true else {
                logger.warning("loopback", "a request without the pending sign-in's state was refused")
                return connection.send(status: "400 Bad Request", html: LoopbackPage.html(.failure(LoopbackPage.foreign)))
            }
            guard outcome.offer(.success(LoopbackArrival(url: url, connection: connection))) else {
                return connection.send(status: "409 Conflict", body: "this sign-in was already completed")
            }
            logger.debug("loopback", "redirect received")
        case .start(let token):
            switch takeStartPage(token) {
            case .first(let target): connection.redirect(to: target)
            case .unknown: connection.send(status: "404 Not Found", body: "not found")
            case .replayed:
                logger.warning("loopback", "the one-time start page was requested twice: the sign-in is aborted")
                _ = outcome.offer(.failure(.stateMismatch))
                connection.send(status: "409 Conflict", html: LoopbackPage.html(.failure(LoopbackPage.replayed)))
            }
        case .reject(let status, let text):
            logger.debug("loopback", "ignored a request: \(status)")
            connection.send(status: status, body: text)
        }
    }

    /// Whether the redirect's `state` is `state` (compared in constant time).
    static func carries(_ url: URL, state: String) -> Bool {
        guard let received = FormEncoding.parameters(of: url)["state"] else { return false }
        return SodiumRuntime.constantTimeEqual(Array(received.utf8), Array(state.utf8))
    }
}

/// The outcome of one wait: the first matching redirect (later ones are refused), or the
/// failure that ended it (a replayed start page).
private final class ArrivalSlot: Sendable {
    private let value = Mutex<Result<LoopbackArrival, AuthError>?>(nil)
    var result: Result<LoopbackArrival, AuthError>? { value.withLock { $0 } }

    /// Stores `result` unless there is one already; whether it was stored.
    func offer(_ result: Result<LoopbackArrival, AuthError>) -> Bool {
        value.withLock { slot in
            guard slot == nil else { return false }
            slot = result
            return true
        }
    }
}
