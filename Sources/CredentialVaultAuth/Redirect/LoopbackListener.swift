import CredentialVault
import Logging
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP listener on 127.0.0.1 that receives the browser's redirect after sign-in
/// (RFC 8252 §7.3). It binds when created (so the port is known before the browser opens)
/// and serves connections with POSIX sockets on threads of its own (never Dispatch's pool, which
/// Swift's cooperative pool runs on, on Linux: a wait blocks its thread for the whole sign-in),
/// several at once, each within
/// a first-byte deadline (1 s), a whole-request deadline and a size limit. A new connection is
/// never refused: when `maximumConnections` are still waiting for their request head, the
/// oldest of them is dropped, so idle connections held open by another local user cannot
/// keep the browser's redirect out. Only the
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
    /// The most connections waiting for their request head at once; a new one beyond this
    /// drops the oldest of them.
    static let maximumConnections = 16
    /// The deadline of a connection's first byte: a browser sends its request at once.
    static let firstByteTimeout: Duration = .seconds(1)

    private let socket: Mutex<Int32>
    private let startPages = Mutex<(pending: [String: StartTarget], used: Set<String>)>(([:], []))
    private let waiting = PendingHeads(limit: maximumConnections)
    let logger: Logger

    /// The redirect URI to register and send: `http://127.0.0.1:<port><path>`.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(path)" }

    /// Binds 127.0.0.1 on `port` (`.ephemeral`: any free port).
    /// Throws `unsupported` when the port is taken or the socket cannot be created. `logger`:
    /// where it logs (default: none, silent; redacted at every level).
    public convenience init(port: LoopbackRedirect.Port, path: String = "/callback", logger: Logger = .credentialVaultSilent) throws(AuthError) {
        try self.init(port: port, path: path, logger: logger, requestTimeout: .seconds(5))
    }

    init(port: LoopbackRedirect.Port, path: String, logger: Logger, requestTimeout: Duration) throws(AuthError) {
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.logger = logger.redacting
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
        logger.debug("listening on 127.0.0.1:\(self.port)", metadata: ["category": "loopback"])
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
    public func startURL(redirectingTo url: URL) -> URL { startURL(redirectingTo: url, openBy: nil) }

    /// A one-time start URL that works only until `openBy` (a PAR request URI expires: the
    /// browser must not be sent to a request the provider no longer knows).
    func startURL(redirectingTo url: URL, openBy: ContinuousClock.Instant?) -> URL {
        let token = SecureRandom.token()
        startPages.withLock { $0.pending[token] = StartTarget(url: url, openBy: openBy) }
        return URL(string: "http://127.0.0.1:\(port)/start/\(token)")!
    }

    /// Where a start page sends the browser, and until when.
    struct StartTarget: Sendable {
        let url: URL
        let openBy: ContinuousClock.Instant?
    }

    /// What a request for the start page `token` gets.
    enum StartPage {
        case first(URL)
        case expired
        case replayed
        case unknown
    }

    /// Takes (single use) the start page `token` names.
    func takeStartPage(_ token: String) -> StartPage {
        startPages.withLock { pages in
            if let target = pages.pending.removeValue(forKey: token) {
                pages.used.insert(token)
                if let openBy = target.openBy, ContinuousClock.now >= openBy { return .expired }
                return .first(target.url)
            }
            return pages.used.contains(token) ? .replayed : .unknown
        }
    }

    /// Whether a start page not opened yet has passed its `openBy`: nobody can complete the
    /// sign-in any more, so the wait need not go on.
    func hasExpiredStartPage() -> Bool {
        let now = ContinuousClock.now
        return startPages.withLock { pages in pages.pending.values.contains { $0.openBy.map { now >= $0 } ?? false } }
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
                Thread.detachNewThread {
                    continuation.resume(returning: self.acceptLoop(fd: fd, deadline: deadline, flag: flag, state: state))
                }
            }
        } onCancel: {
            flag.set()
        }
        return try result.get()
    }

    /// Accepts connections and hands each to a thread of its own, until a matching
    /// redirect has arrived, the deadline passes or the wait is cancelled.
    private func acceptLoop(
        fd: Int32, deadline: ContinuousClock.Instant, flag: CancelFlag, state: String?
    ) -> Result<LoopbackArrival, AuthError> {
        let outcome = ArrivalSlot()
        while true {
            if let result = outcome.result { return result }
            if flag.isSet { return .failure(.cancelled) }
            if hasExpiredStartPage() {
                logger.warning("the sign-in request expired before the browser opened it", metadata: ["category": "loopback"])
                return .failure(.authorizationExpired)
            }
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
            let connection = LoopbackConnection(fd: client)
            let id = waiting.admit(client)  // may drop the oldest connection still without a head
            let now = ContinuousClock.now
            let requestDeadline = min(deadline, now + requestTimeout)
            let firstByteDeadline = min(requestDeadline, now + Self.firstByteTimeout)
            Thread.detachNewThread {
                self.serve(connection, id: id, firstByteBy: firstByteDeadline, until: requestDeadline, expecting: state, into: outcome)
            }
        }
    }

    /// Reads one request and answers it, or hands it over as the arrival.
    private func serve(
        _ connection: LoopbackConnection, id: Int, firstByteBy firstByte: ContinuousClock.Instant, until deadline: ContinuousClock.Instant,
        expecting state: String?, into outcome: ArrivalSlot
    ) {
        let read = connection.readHead(firstByteBy: firstByte, until: deadline, limit: Self.maximumRequestSize)
        waiting.finished(id)  // before the connection is answered or closed: it can no longer be dropped
        let head: String
        switch read {
        case .head(let text): head = text
        case .tooLarge: return connection.send(status: "431 Request Header Fields Too Large", body: "request too large")
        case .timedOut: return connection.send(status: "408 Request Timeout", body: "request timeout")
        case .closed: return connection.discard()
        }
        switch classify(head) {
        case .redirect(let url):
            guard state.map({ Self.carries(url, state: $0) }) ?? true else {
                logger.warning("a request without the pending sign-in's state was refused", metadata: ["category": "loopback"])
                return connection.send(status: "400 Bad Request", html: LoopbackPage.html(.failure(LoopbackPage.foreign)))
            }
            guard outcome.offer(.success(LoopbackArrival(url: url, connection: connection))) else {
                return connection.send(status: "409 Conflict", body: "this sign-in was already completed")
            }
            logger.debug("redirect received", metadata: ["category": "loopback"])
        case .start(let token):
            switch takeStartPage(token) {
            case .first(let target): connection.redirect(to: target)
            case .expired:
                logger.warning("the sign-in request expired before the browser opened it", metadata: ["category": "loopback"])
                _ = outcome.offer(.failure(.authorizationExpired))
                connection.send(status: "410 Gone", html: LoopbackPage.html(.failure(LoopbackPage.expired)))
            case .unknown: connection.send(status: "404 Not Found", body: "not found")
            case .replayed:
                logger.warning("the one-time start page was requested twice: the sign-in is aborted", metadata: ["category": "loopback"])
                _ = outcome.offer(.failure(.stateMismatch))
                connection.send(status: "409 Conflict", html: LoopbackPage.html(.failure(LoopbackPage.replayed)))
            }
        case .reject(let status, let text):
            logger.debug("ignored a request: \(status)", metadata: ["category": "loopback"])
            connection.send(status: status, body: text)
        }
    }

    /// Whether the redirect's `state` is `state` (compared in constant time).
    static func carries(_ url: URL, state: String) -> Bool {
        guard let received = FormEncoding.parameters(of: url)["state"] else { return false }
        return SodiumRuntime.constantTimeEqual(Array(received.utf8), Array(state.utf8))
    }
}

/// The connections still waiting for their request head, oldest first. When `limit` of them
/// are waiting, admitting another shuts the reading side of the oldest down (its reader then
/// sees the connection closed and lets it go; only reading, so a head that had just arrived
/// can still be answered). A connection leaves the list, under the same lock, before its
/// descriptor is answered or closed, so a shutdown never reaches a reused descriptor.
private final class PendingHeads: Sendable {
    private let state = Mutex<(next: Int, open: [(id: Int, fd: Int32)])>((0, []))
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Registers a new connection, dropping the oldest waiting one when `limit` are waiting.
    func admit(_ fd: Int32) -> Int {
        state.withLock { state in
            while state.open.count >= limit {
                _ = shutdown(state.open.removeFirst().fd, Int32(SHUT_RD))
            }
            state.next += 1
            state.open.append((state.next, fd))
            return state.next
        }
    }

    /// The connection's head has arrived (or it failed): it is no longer waiting.
    func finished(_ id: Int) {
        state.withLock { state in state.open.removeAll { $0.id == id } }
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
