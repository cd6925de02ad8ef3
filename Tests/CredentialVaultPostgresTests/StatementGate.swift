import CredentialVaultTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A proxy in front of the plain test cluster (a unix socket of its own, forwarding every byte
/// both ways) that holds one statement on its way to the server: armed with `hold(_:)`, the
/// first piece a client sends that contains the pattern (a statement's text, or its prepared
/// name followed by NUL, as libpq's Parse message carries it) waits until `release()`. The
/// test then does what must happen "between" (a rotation committing) without any sleep: it
/// knows the statement is held (`held`) and lets it go when it chooses.
///
/// A stub that only delays: the server and the product's connections are real.
final class StatementGate: Sendable {
    /// The connection string of the cluster through this proxy.
    let conninfo: String
    /// One arrival when the armed pattern was seen and its statement is being held.
    let held = Arrivals()

    private struct State {
        var pattern: [UInt8]?
        var holding = false
        var released = false
        var sockets: Set<Int32> = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let directory: URL
    private let listener: Int32
    private let upstreamPath: String
    private let opened = DispatchSemaphore(value: 0)

    /// Listens beside the cluster's socket: `host=DIR port=N` of `upstream` become this
    /// proxy's directory and the same port number.
    init(upstream: String = TestCluster.conninfo!) throws {
        let settings = Dictionary(
            upstream.split(separator: " ").compactMap { pair -> (String, String)? in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return parts.count == 2 ? (parts[0], parts[1]) : nil
            }, uniquingKeysWith: { $1 })
        guard let host = settings["host"], host.hasPrefix("/"), let port = settings["port"] else {
            throw TestFailure("the gate needs a unix-socket conninfo (host=/dir port=N)")
        }
        upstreamPath = "\(host)/.s.PGSQL.\(port)"
        directory = URL(fileURLWithPath: "/tmp/cv-gate-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, Self.withAddress("\(directory.path)/.s.PGSQL.\(port)", { bind(fd, $0, $1) }) == 0, Glibc.listen(fd, 64) == 0
        else { throw TestFailure("the gate cannot listen (errno \(errno))") }
        listener = fd
        // Later keywords win in a libpq connection string: the same cluster, through the proxy.
        conninfo = upstream + " host=\(directory.path)"
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Arms the gate: the next piece a client sends that contains `pattern` is held.
    func hold(_ pattern: String) {
        state.withLock { $0.pattern = Array(pattern.utf8) }
    }

    /// Arms the gate on a prepared statement's name (libpq's Parse message has it NUL-ended).
    func holdPrepared(_ name: String) { hold(name + "\0") }

    /// Lets the held statement (and everything behind it) through.
    func release() {
        let wake = state.withLock { s -> Bool in
            guard !s.released else { return false }
            s.released = true
            return true
        }
        if wake { opened.signal() }
    }

    /// Cuts every connection, then releases a held statement (it then reaches nobody), and
    /// removes the socket (every test that makes a gate stops it: its threads keep it alive
    /// until then). In that order: released first, the held statement went through and, on a
    /// busy machine, the client's whole transaction behind it, commit included, before the
    /// connections were cut ("a rotation cut off" then committed).
    func stop() {
        let sockets = state.withLock { s -> Set<Int32> in
            s.stopped = true
            return s.sockets
        }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for fd in sockets { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        release()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Forwarding

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            // Spawns of this test process close every descriptor above 2 in the child anyway.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard server >= 0, Self.withAddress(upstreamPath, { connect(server, $0, $1) }) == 0 else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            let admitted = state.withLock { s -> Bool in
                guard !s.stopped else { return false }
                s.sockets.formUnion([client, server])
                return true
            }
            guard admitted else {
                close(client)
                close(server)
                break
            }
            let finished = Arrivals()
            Thread { [self] in
                pump(from: client, to: server, inspecting: true)
                finished.arrive()
            }.start()
            Thread { [self] in
                pump(from: server, to: client, inspecting: false)
                finished.arrive()
            }.start()
            Thread { [self] in
                _ = finished.waitBlocking(for: 2, ceiling: .seconds(3600))
                state.withLock { $0.sockets.subtract([client, server]) }
                close(client)
                close(server)
            }.start()
        }
        close(listener)
    }

    /// Copies bytes until either side ends; the client's side is searched for the armed pattern
    /// (across the boundary of two reads) and held there once.
    private func pump(from source: Int32, to target: Int32, inspecting: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var tail: [UInt8] = []
        while true {
            let n = read(source, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            let chunk = Array(buffer[0..<n])
            if inspecting { tail = holdIfArmed(tail + chunk) }
            guard writeAll(target, chunk) else { break }
        }
        Glibc.shutdown(target, Int32(SHUT_WR))
    }

    /// Holds the calling pump when `window` contains the armed pattern; returns the bytes to
    /// keep for the next search.
    private func holdIfArmed(_ window: [UInt8]) -> [UInt8] {
        let matched = state.withLock { s -> Bool in
            guard let pattern = s.pattern, !s.holding, Self.contains(window, pattern) else { return false }
            s.holding = true
            s.pattern = nil
            return true
        }
        if matched {
            held.arrive()
            opened.wait()
        }
        let keep = state.withLock { $0.pattern.map { max(0, $0.count - 1) } ?? 0 }
        return Array(window.suffix(keep))
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }  // a cut connection: EPIPE, never SIGPIPE
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }

    /// Calls `body` with a `sockaddr_un` for `path`.
    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
