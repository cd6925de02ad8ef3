import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `request-as-user UID SOCKET NAME`: as UID (from root), binds the abstract address NAME (what
/// systemd binds: RANDOM/unit/UNIT/CREDENTIAL), connects to the serve-credentials SOCKET and
/// reads to the end; prints "received N" (the byte count, never the bytes) or "error WHY".
func requestAsUser(_ args: [String]) {
    guard let uid = UInt32(args[0]), setgid(uid) == 0, setuid(uid) == 0 else { fail("request-as-user: cannot become \(args[0])") }
    request(socket: args[1], name: args[2])
}

/// `request-in-cgroup CGROUP SOCKET NAME`: moves itself into the cgroup directory CGROUP (its
/// pid written to `cgroup.procs`), then asks as `request-as-user` does, with the same output.
func requestInCgroup(_ args: [String]) {
    let procs = open(args[0] + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
    let pid = Array("\(getpid())".utf8)
    guard procs >= 0, write(procs, pid, pid.count) == pid.count else { fail("request-in-cgroup: cannot join \(args[0])") }
    close(procs)
    request(socket: args[1], name: args[2])
}

/// Binds the abstract address `name`, connects to `socket`, reads to the end; prints "received
/// N" or "error WHY".
private func request(socket path: String, name: String) {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    func address(_ bytes: [UInt8]) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.prefix(raw.count - 1).enumerated() { raw[i] = b } }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + min(bytes.count, 107)))
    }
    var (local, localLength) = address([0] + Array(name.utf8))
    var (remote, remoteLength) = address(Array(path.utf8))
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
