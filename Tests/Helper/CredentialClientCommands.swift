import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `request-as-user UID SOCKET NAME`: as UID (from root), binds the abstract address NAME (what
/// systemd binds: RANDOM/unit/UNIT/CREDENTIAL), connects to the serve-credentials SOCKET and
/// reads to the end; prints "received N" (the byte count, never the bytes) or "error WHY".
func requestAsUser(_ args: [String]) {
    guard let uid = UInt32(args[0]), setgid(uid) == 0, setuid(uid) == 0 else { fail("request-as-user: cannot become \(args[0])") }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    func address(_ bytes: [UInt8]) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.prefix(raw.count - 1).enumerated() { raw[i] = b } }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + min(bytes.count, 107)))
    }
    var (local, localLength) = address([0] + Array(args[2].utf8))
    var (remote, remoteLength) = address(Array(args[1].utf8))
    let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, localLength) } }
    let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, remoteLength) } }
    guard fd >= 0, bound == 0, connected == 0 else {
        emit("error \(String(cString: strerror(errno)))")
        return
    }
    var total = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        total += n
    }
    emit("received \(total)")
}
