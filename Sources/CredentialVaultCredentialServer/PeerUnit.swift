import CLinuxCalls
#if canImport(Glibc)
import Glibc
#endif

/// The unit a connected client runs in, read from its cgroup: systemd runs every process of a
/// unit in the unit's own cgroup, and connects for `LoadCredential=` from a process of the unit
/// being started, so the unit a client names in its address (`PeerAddress`, a claim anyone who
/// may connect can make) is checked against the one its cgroup names.
///
/// Pid reuse: the cgroup is read through the peer's pidfd (`SO_PEERPIDFD`, Linux 6.5; else
/// `pidfd_open` of `SO_PEERCRED`'s pid), and the answer is kept only when the process is still
/// alive after the read: a pid that a new process took meanwhile is never asked about. Before
/// Linux 6.5 a client that exits between its connect and that `pidfd_open` could leave its pid
/// to another process first (a race of a few microseconds, which only a process in the claimed
/// unit could win for it).
package enum PeerUnit: Equatable, CustomStringConvertible {
    /// It runs in this unit.
    case unit(String)
    /// Its cgroup names no unit (the root cgroup, a cgroup made by hand): the path.
    case outsideAnyUnit(String)
    /// Its cgroup cannot be known (why).
    case unknown(String)

    package var description: String {
        switch self {
        case .unit(let unit): "runs in \(unit)"
        case .outsideAnyUnit(let path): "runs outside any unit (cgroup \(path))"
        case .unknown(let why): "its unit cannot be checked: \(why)"
        }
    }

    /// The unit of the process at the other end of the connected socket `fd`, whose
    /// `SO_PEERCRED` pid is `pid`.
    static func of(_ fd: Int32, pid: Int32) -> PeerUnit {
        var pidfd: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, CL_SO_PEERPIDFD, &pidfd, &length) != 0 {
            let failure = errno
            guard mayOpenByPid(afterPeerPidfdFailed: failure) else {
                return .unknown("no pidfd for the client (\(String(cString: strerror(failure)))): it has exited")
            }
            pidfd = cl_pidfd_open(pid)
        }
        defer { if pidfd >= 0 { close(pidfd) } }
        guard pidfd >= 0 else { return .unknown("no pidfd for pid \(pid) (\(String(cString: strerror(errno))))") }
        guard let text = read("/proc/\(pid)/cgroup") else { return .unknown("/proc/\(pid)/cgroup cannot be read") }
        // Still alive after the read (a pidfd becomes readable when its process exits): the
        // file read was this process's, not that of a later one with the same pid.
        var poll = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&poll, 1, 0) == 0 else { return .unknown("the client exited before its cgroup could be checked") }
        guard let path = cgroupPath(in: text) else { return .unknown("/proc/\(pid)/cgroup names no systemd cgroup") }
        return unit(ofCgroup: path).map(PeerUnit.unit) ?? .outsideAnyUnit(path)
    }

    /// Whether a pidfd may be opened from `SO_PEERCRED`'s pid after `SO_PEERPIDFD` failed with
    /// `errno`: only when the kernel does not have that option (before Linux 6.5). Any other
    /// failure (`ESRCH`: the client exited and was reaped, on kernels 6.5 to 6.15) means that
    /// pid may already be another process's.
    package static func mayOpenByPid(afterPeerPidfdFailed errno: Int32) -> Bool { errno == ENOPROTOOPT }

    /// The cgroup path `/proc/PID/cgroup` gives for systemd's hierarchy: the unified one
    /// (`0::PATH`), else the named v1 one (`N:name=systemd:PATH`).
    package static func cgroupPath(in text: String) -> String? {
        let lines = text.split(separator: "\n")
        if let line = lines.first(where: { $0.hasPrefix("0::") }) { return String(line.dropFirst(3)) }
        for line in lines {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if fields.count == 3, fields[1] == "name=systemd" { return String(fields[2]) }
        }
        return nil
    }

    /// The unit a cgroup path belongs to, as systemd reads it (`cg_path_get_unit`): the first
    /// component that is not a slice; inside a user manager (`user@UID.service`), the first one
    /// after that is not a slice either. Components below the unit (a unit with `Delegate=`
    /// names its own subgroups) never count, whatever their names. `nil` when no component names
    /// a unit.
    package static func unit(ofCgroup path: String) -> String? {
        var components = path.split(separator: "/").map { unescaped(String($0)) }[...]
        func nextUnit() -> String? {
            while let component = components.popFirst() {
                if component.hasSuffix(".slice") { continue }
                return isUnitWithProcesses(component) ? component : nil
            }
            return nil
        }
        guard let unit = nextUnit() else { return nil }
        if unit.hasPrefix("user@"), unit.hasSuffix(".service"), let userUnit = nextUnit() { return userUnit }
        return unit
    }

    /// A name of a unit type that has processes of its own.
    private static func isUnitWithProcesses(_ name: String) -> Bool {
        [".service", ".scope", ".socket", ".mount", ".swap"].contains { name.hasSuffix($0) && name.count > $0.count }
    }

    /// systemd's cgroup escape undone (`cg_unescape`): a leading `_` it added is dropped.
    private static func unescaped(_ component: String) -> String {
        component.hasPrefix("_") ? String(component.dropFirst()) : component
    }

    /// A small text file of /proc, `nil` when it cannot be read.
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            bytes += buffer[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
