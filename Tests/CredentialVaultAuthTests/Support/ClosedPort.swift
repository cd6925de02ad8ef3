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

    init() throws { (fd, port) = try LoopbackSocket.bound() }

    deinit { close(fd) }
}
