import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

@testable import CredentialVaultAuth

/// A small protected resource on 127.0.0.1 for the MCP discovery tests: it serves its RFC 9728
/// metadata at `/.well-known/oauth-protected-resource/mcp` pointing at an authorization server,
/// answers `/mcp` without a token with 401 and `WWW-Authenticate: Bearer resource_metadata=...`,
/// validates the authorization server's JWT access tokens (signature by its JWKS, `iss`, `exp`,
/// `aud` when a resource is expected), DPoP proofs when told to (`DPoPProofValidator`), and
/// answers 403 `insufficient_scope` with a `scope` parameter when a required scope is missing.
/// It binds a port of `provisionedPorts` when its tokens must name it (glewlwyd's `reg`
/// plugin allows exactly those resource URLs).
///
/// One connection at a time on its own thread (blocking sockets, never the cooperative pool),
/// every read bounded by a socket timeout.
final class TestResourceServer: Sendable {
    /// What the server checks and publishes.
    struct Policy: Sendable {
        /// The issuer its tokens must come from (and the metadata's authorization server).
        var issuer: URL
        /// The issuer's keys.
        var keys: JSONWebKeySet
        /// A scope every request needs (403 `insufficient_scope` without it).
        var requiredScope: String?
        /// Whether a token's `aud` must be this resource (RFC 8707 tokens).
        var expectsAudience = false
        /// Publishes another `resource` than its own (the "metadata for another resource" test).
        var publishedResource: String?
        /// The seam for DPoP: called with the request's method, path and headers (names in
        /// lower case) and the verified claims; a non-nil answer is the rejection's
        /// `WWW-Authenticate` value (401); `nil` accepts.
        var proofCheck: (@Sendable (_ method: String, _ path: String, _ headers: [String: String], _ claims: [String: JSONValue]) -> String?)?
        /// When set, only DPoP-bound tokens are accepted (`Authorization: DPoP`), each with a
        /// proof this validator accepts (RFC 9449 section 7.1); the metadata says so.
        var dpop: DPoPProofValidator?
        /// The scopes its metadata publishes.
        var scopesSupported = ["openid"]
        /// Answers every request with a token 403 `insufficient_scope` (a resource whose
        /// demands are never met: the client's step-up cap).
        var alwaysInsufficient = false
        /// The ports it may bind, tried in order (glewlwyd allows resources by exact URL, so
        /// a server whose tokens name it binds a provisioned port); `nil`: any free port.
        var ports: ClosedRange<UInt16>?
    }

    /// The ports of `http://127.0.0.1:PORT/mcp` that scripts/glewlwyd/provision-registration.sh
    /// lets plugin "reg" issue tokens for.
    static let provisionedPorts: ClosedRange<UInt16> = 29410...29425

    let port: UInt16
    private let fd: Int32
    private let policy: Policy
    private let closed = Atomic<Bool>(false)
    private let statuses = Mutex<[Int]>([])

    /// The status of every answer to the protected path so far, in order.
    var answeredStatuses: [Int] { statuses.withLock { $0 } }

    /// The resource identifier: `http://127.0.0.1:<port>/mcp`.
    var resource: URL { URL(string: "http://127.0.0.1:\(port)/mcp")! }
    /// Where its metadata is (RFC 9728 §3.1).
    var metadataURL: URL { URL(string: "http://127.0.0.1:\(port)/.well-known/oauth-protected-resource/mcp")! }

    init(policy: Policy) throws {
        let (fd, port) = try Self.bind(policy.ports)
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        self.fd = fd
        self.port = port
        self.policy = policy
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    private static func bind(_ ports: ClosedRange<UInt16>?) throws -> (fd: Int32, port: UInt16) {
        guard let ports else { return try LoopbackSocket.bound() }
        for port in ports {
            if let bound = try? LoopbackSocket.bound(port: port) { return bound }
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// Stops serving (the thread sees it within its 100 ms poll) and closes the socket.
    func stop() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }

    deinit {
        stop()
        close(fd)
    }

    private func serve() {
        while !closed.load(ordering: .acquiring) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if let head = readHead(connection) {
                let (status, headers, body) = respond(to: head)
                write(connection, status: status, headers: headers, body: body)
            }
            close(connection)
        }
    }

    /// The request head (up to 16 KiB), or nil on a timeout or garbage.
    private func readHead(_ connection: Int32) -> (method: String, path: String, headers: [String: String])? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count < 16384 {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            data += buffer[0..<count]
            if let end = String(decoding: data, as: UTF8.self).range(of: "\r\n\r\n") {
                let text = String(String(decoding: data, as: UTF8.self)[..<end.lowerBound])
                let lines = text.components(separatedBy: "\r\n")
                let request = lines[0].split(separator: " ")
                guard request.count >= 2 else { return nil }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return (String(request[0]), String(request[1]), headers)
            }
        }
        return nil
    }

    private func write(_ connection: Int32, status: String, headers: [String: String], body: String) {
        var head = "HTTP/1.1 \(status)\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let bytes = Array((head + "\r\n" + body).utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            sent += count
        }
    }

    private func respond(to head: (method: String, path: String, headers: [String: String])) -> (String, [String: String], String) {
        let json = ["Content-Type": "application/json"]
        switch head.path {
        case metadataURL.path:
            let metadata: [String: Any] = [
                "resource": policy.publishedResource ?? resource.absoluteString,
                "authorization_servers": [policy.issuer.absoluteString], "scopes_supported": policy.scopesSupported,
                "bearer_methods_supported": ["header"], "dpop_bound_access_tokens_required": policy.dpop != nil,
            ]
            let body = String(decoding: (try? JSONSerialization.data(withJSONObject: metadata, options: .sortedKeys)) ?? Data(), as: UTF8.self)
            return ("200 OK", json, body)
        case resource.path:
            let answer = protected(head)
            statuses.withLock { $0.append(Int(answer.0.prefix(3)) ?? 0) }
            return answer
        default:
            return ("404 Not Found", [:], "")
        }
    }

    private func protected(_ head: (method: String, path: String, headers: [String: String])) -> (String, [String: String], String) {
        let challenge = "Bearer resource_metadata=\"\(metadataURL.absoluteString)\""
        guard let authorization = head.headers["authorization"] else {
            return ("401 Unauthorized", ["WWW-Authenticate": challenge], "")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, ["bearer", "dpop"].contains(parts[0].lowercased()),
            let claims = verify(String(parts[1]))
        else {
            return ("401 Unauthorized", ["WWW-Authenticate": challenge + ", error=\"invalid_token\""], "")
        }
        if let validator = policy.dpop {
            let url = "http://127.0.0.1:\(port)" + (head.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.path)
            let rejection = parts[0].lowercased() != "dpop" ? "a DPoP-bound token is required"
                : validator.rejection(proof: head.headers["dpop"], method: head.method, url: url, accessToken: String(parts[1]), claims: claims)
            if let rejection {
                return ("401 Unauthorized", ["WWW-Authenticate": "DPoP error=\"invalid_dpop_proof\", error_description=\"\(rejection)\", algs=\"ES256\""], "")
            }
        }
        if policy.alwaysInsufficient {
            return ("403 Forbidden", ["WWW-Authenticate": challenge + ", error=\"insufficient_scope\", scope=\"mcp\""], "")
        }
        if let proofCheck = policy.proofCheck, let rejection = proofCheck(head.method, head.path, head.headers, claims) {
            return ("401 Unauthorized", ["WWW-Authenticate": rejection], "")
        }
        if let required = policy.requiredScope {
            let granted = claims["scope"]?.stringValue?.split(separator: " ").map(String.init) ?? []
            guard granted.contains(required) else {
                return ("403 Forbidden", ["WWW-Authenticate": challenge + ", error=\"insufficient_scope\", scope=\"\(required)\""], "")
            }
        }
        return ("200 OK", ["Content-Type": "application/json"], #"{"ok":true}"#)
    }

    /// The token's claims when its signature, issuer, expiry and (if expected) audience hold.
    private func verify(_ token: String) -> [String: JSONValue]? {
        guard let jwt = try? JSONWebToken(compactSerialization: token), (try? jwt.jws.verify(using: policy.keys)) != nil,
            jwt.claims["iss"]?.stringValue == policy.issuer.absoluteString,
            let expiry = jwt.claims["exp"]?.numberValue, expiry > Date().timeIntervalSince1970
        else { return nil }
        if policy.expectsAudience {
            let audience = jwt.claims["aud"]
            let audiences = audience?.stringValue.map { [$0] } ?? audience?.arrayValue?.compactMap(\.stringValue) ?? []
            guard audiences.contains(resource.absoluteString) else { return nil }
        }
        return jwt.claims
    }
}
