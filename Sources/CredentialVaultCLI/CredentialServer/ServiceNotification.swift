import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// systemd's readiness protocol (sd_notify(3)), so that `Type=notify` orders the units that load
/// credentials from the socket after it is listening: one `READY=1` datagram to the
/// `AF_UNIX` socket `$NOTIFY_SOCKET` names (a path, or `@NAME` for an abstract one).
enum ServiceNotification {
    /// Sends `READY=1` when `$NOTIFY_SOCKET` is set; a failure is returned to be logged (the
    /// unit then times out in systemd, which says so: nothing is hidden).
    static func ready(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        var path = Array(name.utf8)
        if path[0] == UInt8(ascii: "@") { path[0] = 0 }
        guard path[0] == UInt8(ascii: "/") || path[0] == 0, let address = UnixAddress(path) else {
            return "NOTIFY_SOCKET is neither an absolute path nor an abstract @name"
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "cannot create a socket for NOTIFY_SOCKET" }
        defer { close(fd) }
        let message = Array("READY=1".utf8)
        let sent = address.withSocketAddress { sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), $0, $1) }
        return sent == message.count ? nil : "cannot notify systemd: \(String(cString: strerror(errno)))"
    }
}
