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
        guard path.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path), path[0] == UInt8(ascii: "/") || path[0] == UInt8(ascii: "@") else {
            return "NOTIFY_SOCKET is neither an absolute path nor an abstract @name"
        }
        if path[0] == UInt8(ascii: "@") { path[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, byte) in path.enumerated() { raw[i] = byte } }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "cannot create a socket for NOTIFY_SOCKET" }
        defer { close(fd) }
        let message = Array("READY=1".utf8)
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), $0, length) }
        }
        return sent == message.count ? nil : "cannot notify systemd: \(String(cString: strerror(errno)))"
    }
}
