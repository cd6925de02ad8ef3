import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A client of `credvault serve-credentials` that connects as systemd does: bound first to an
/// abstract address (`\0<random>/unit/<unit>/<credential>`), or to none, a path or any bytes,
/// to play a hostile client.
enum AbstractClient {
    enum Bind {
        case none
        case abstract([UInt8])
        case path(String)

        /// systemd's address for `unit` and `credential`.
        static func systemd(unit: String, credential: String) -> Bind {
            .abstract(Array("\(randomPart)/unit/\(unit)/\(credential)".utf8))
        }

        /// A random part as systemd makes it (up to 16 hexadecimal digits): abstract addresses
        /// are shared by every process on the machine, so each client's is its own.
        static var randomPart: String { String(UInt64.random(in: 0...UInt64.max), radix: 16) }
    }

    /// A connected socket to `socket`, bound as `bind` says; -1 on failure.
    static func connect(_ socket: String, from bind: Bind) -> Int32 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var local = sockaddr_un()
        local.sun_family = sa_family_t(AF_UNIX)
        var length = 0
        switch bind {
        case .none: break
        case .abstract(let name):
            length = 1 + name.count
            withUnsafeMutableBytes(of: &local.sun_path) { raw in for (i, b) in name.enumerated() { raw[1 + i] = b } }
        case .path(let path):
            length = path.utf8.count + 1
            withUnsafeMutableBytes(of: &local.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        }
        if length > 0 {
            let size = socklen_t(MemoryLayout<sa_family_t>.size + length)
            let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, size) } }
            guard bound == 0 else {
                close(fd)
                return -1
            }
        }
        var remote = sockaddr_un()
        remote.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &remote.sun_path) { raw in for (i, b) in socket.utf8.enumerated() { raw[i] = b } }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    /// Reads `fd` to its end (or an error such as a reset), at most `timeout`; closes it.
    static func readAll(_ fd: Int32, timeout: Duration = .seconds(10)) -> Data {
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return data }
            data.append(contentsOf: buffer[..<n])
        }
    }

    /// Connects as `bind` says and reads the answer.
    static func request(_ socket: String, from bind: Bind) -> Data? {
        let fd = connect(socket, from: bind)
        return fd < 0 ? nil : readAll(fd)
    }
}
