import CredentialVaultTestSupport
import Dispatch
import Foundation
import Synchronization

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// A misbehaving provider on 127.0.0.1: a raw HTTP/1.1 server (POSIX sockets on Dispatch
/// threads, never the cooperative pool) whose answers a test scripts per request, down to
/// the bytes on the wire (trailers, bad chunking, early close, slow drip). Every request it
/// received is recorded.
final class StubProvider: Sendable {
    /// One received request.
    struct Request: Sendable {
        var method: String
        /// The path without the query.
        var path: String
        var query: [String: String]
        /// Header names in lower case.
        var headers: [String: String]
        var body: Data

        /// The form body's fields (`application/x-www-form-urlencoded`).
        var form: [String: String] {
            var components = URLComponents()
            components.percentEncodedQuery = String(decoding: body, as: UTF8.self).replacingOccurrences(of: "+", with: "%20")
            var result: [String: String] = [:]
            for item in components.queryItems ?? [] { result[item.name] = item.value ?? "" }
            return result
        }
    }

    /// What the stub sends back.
    enum Reply: Sendable {
        /// A well-formed response with a Content-Length.
        case http(status: Int, headers: [String: String], body: Data)
        /// Raw steps: bytes, pauses; then the connection is closed.
        case raw([Step])
    }

    /// A step of a raw reply.
    enum Step: Sendable {
        case bytes(Data)
        /// A slow network (nothing may depend on how long).
        case pause(Duration)
        /// Holds the reply until the test opens the gate.
        case wait(Gate)
    }

    let port: UInt16
    private let listening: Mutex<Int32>
    private let received = Mutex<[Request]>([])
    /// Every request arrives here once it has been read (before it is answered).
    let arrivals = Arrivals()
    private let handler: @Sendable (Request) -> Reply

    /// `http://127.0.0.1:<port>`.
    var base: String { "http://127.0.0.1:\(port)" }

    /// `base` + `path` as a URL.
    func url(_ path: String) -> URL { URL(string: base + path)! }

    /// Starts serving; `handler` answers every request.
    init(_ handler: @escaping @Sendable (Request) -> Reply) throws {
        let (fd, port) = try LoopbackSocket.bound()
        guard listen(fd, 64) == 0 else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        self.port = port
        listening = Mutex(fd)
        self.handler = handler
        // Threads of its own, not Dispatch's pool: a test's blocked stub must not starve the
        // workers the client under test needs. The loop holds the stub weakly and ends with it.
        // The loop closes the socket itself, once it no longer polls it: closed by `close()`
        // while this thread polls, its descriptor number could be reused by another test's stub,
        // whose connections this loop would then accept and answer with the wrong handler.
        Thread.detachNewThread { [weak self] in
            defer { Glibc.close(fd) }
            while let server = self, server.listening.withLock({ $0 }) == fd {
                guard let client = Self.accept(fd) else { continue }
                Thread.detachNewThread { server.serve(client) }
            }
        }
    }

    deinit { close() }

    /// Stops accepting (the accept loop closes the socket when it sees this).
    func close() {
        listening.withLock { fd in
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
            fd = -1
        }
    }

    /// Every request received so far.
    var requests: [Request] { received.withLock { $0 } }

    /// The requests to a path.
    func requests(to path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Waits up to 100 ms for a connection.
    private static func accept(_ fd: Int32) -> Int32? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 100) > 0 else { return nil }
        let client = Glibc.accept(fd, nil, nil)
        return client >= 0 ? client : nil
    }

    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = Self.read(fd) else { return }
        received.withLock { $0.append(request) }
        arrivals.arrive()
        switch handler(request) {
        case .http(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Stub\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            Self.write(fd, Data((head + "\r\n").utf8) + body)
        case .raw(let steps):
            for step in steps {
                switch step {
                case .bytes(let data): Self.write(fd, data)
                case .pause(let duration): usleep(UInt32(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000))
                case .wait(let gate): gate.waitBlocking()
                }
            }
        }
        shutdown(fd, Int32(SHUT_WR))
    }

    private static func read(_ fd: Int32) -> Request? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0, data.count < 1 << 20 else { return nil }
            data.append(contentsOf: buffer[0..<count])
            headEnd = data.range(of: Data("\r\n\r\n".utf8))
        }
        let head = String(decoding: data[..<headEnd!.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(data[headEnd!.upperBound...])
        if headers["expect"]?.lowercased() == "100-continue" { write(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        while body.count < length {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            body.append(contentsOf: buffer[0..<count])
        }
        let components = URLComponents(string: String(requestLine[1]))
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return Request(method: String(requestLine[0]), path: components?.path ?? "", query: query, headers: headers, body: body)
    }

    private static func write(_ fd: Int32, _ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { return }
                offset += sent
            }
        }
    }
}

extension StubProvider.Reply {
    /// A 200 JSON answer.
    static func json(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> Self {
        .http(status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: Data(text.utf8))
    }

    /// 404.
    static var notFound: Self { .http(status: 404, headers: [:], body: Data()) }
}

/// Sends every request to the stub, whatever its scheme, host and port (so that an https
/// issuer can be played on 127.0.0.1), keeping path and query.
struct RoutingTransport: HTTPTransport {
    let stub: StubProvider
    var inner: any HTTPTransport = URLSessionTransport()

    func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        var routed = request
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = Int(stub.port)
        routed.url = components.url!
        return try await inner.send(routed)
    }
}
