import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 where connections are refused, for as long as this lives: bound but
/// not listening, so that no other test running beside this one can take it (a port bound and
/// closed again could be handed to another test's server in between).
final class ClosedPort: Sendable {
    let port: UInt16
    private let fd: Int32

    struct Failure: Error {}

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard fd >= 0, bound == 0 else {
            close(fd)
            throw Failure()
        }
        self.fd = fd
        port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { close(fd) }
}
