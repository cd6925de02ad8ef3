#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One connection `serve-credentials` is writing a value to: the descriptor (non-blocking), what
/// is left to write, and the deadline by which all of it must be written. The value is wiped and
/// the descriptor closed when the client is dropped, served or not.
final class ServedClient {
    let fd: Int32
    let request: PeerAddress
    let pid: Int32
    /// The unit the client really runs in (its cgroup's).
    let peer: PeerUnit
    let deadline: ContinuousClock.Instant
    private var value: Data
    private var sent = 0

    init(fd: Int32, request: PeerAddress, pid: Int32, peer: PeerUnit, value: Data, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.request = request
        self.pid = pid
        self.peer = peer
        self.value = value
        self.deadline = deadline
    }

    deinit {
        value.resetBytes(in: 0..<value.count)
        close(fd)
    }

    /// What a write attempt left.
    enum Progress {
        case done
        case waiting
        case failed(String)
    }

    /// Writes as much as the socket takes now (never blocking, never raising SIGPIPE).
    func write() -> Progress {
        while sent < value.count {
            let n = value.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return .waiting }
                return .failed(String(cString: strerror(errno)))
            }
            sent += n
        }
        return .done
    }
}
