import CredentialVault
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The `AF_UNIX` stream socket a `CredentialServer` listens on, bound at a path systemd
/// connects to (`LoadCredential=NAME:PATH`).
///
/// The socket file is created mode 0600 (`umask` around `bind`: no moment at which another
/// user could connect), in a directory owned by this user or root that no one else can write
/// (else the socket could be replaced by another's), below directories that are the same or
/// sticky (`checkAncestors`). A socket left at the path by a server that
/// died is replaced; one with a live server behind it, or anything that is not a socket, is
/// refused. On `close` the file is removed only if it is still the one bound here.
final class ListeningSocket: Sendable {
    let fd: Int32
    let path: String
    private let identity: (dev_t, ino_t)
    /// Set by the first `close`: the server's run and its deinit both close, once.
    private let closed = Atomic(false)

    /// Binds and listens at `path`; throws `invalidArgument`, `permissionDenied`, or `busy`
    /// when a server answers on `path` (the caller says so: `busy`'s own text is the vault's lock).
    init(path: String, backlog: Int32 = 128) throws(CredentialVaultError) {
        guard let address = UnixAddress(Array(path.utf8)), !path.utf8.contains(0) else {
            throw .invalidArgument("the socket path must be 1 to 107 bytes")
        }
        self.path = path
        try Self.checkDirectory(of: path)
        try Self.removeStale(path, address)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .io("cannot create a socket: \(String(cString: strerror(errno)))") }
        let previous = umask(0o177)
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        umask(previous)
        var info = stat()
        guard bound == 0, listen(fd, backlog) == 0, lstat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .io("cannot listen on \(path): \(reason)")
        }
        self.fd = fd
        identity = (info.st_dev, info.st_ino)
    }

    /// Stops listening and removes the socket file if it is still the one bound here (once;
    /// later calls do nothing).
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(fd)
        var info = stat()
        if lstat(path, &info) == 0, info.st_dev == identity.0, info.st_ino == identity.1 { unlink(path) }
    }

    /// The directory must be this user's or root's, and writable by no one else.
    private static func checkDirectory(of path: String) throws(CredentialVaultError) {
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        var info = stat()
        guard stat(directory, &info) == 0 else { throw .invalidArgument("the socket's directory \(directory) does not exist") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .invalidArgument("\(directory) is not a directory") }
        guard info.st_uid == geteuid() || info.st_uid == 0, info.st_mode & 0o022 == 0 else {
            throw .permissionDenied(
                "the socket's directory \(directory) is writable by other users or belongs to another user: put the socket in a directory of its own (mkdir -m 700 /run/credvault)")
        }
        try checkAncestors(of: directory)
    }

    /// Every directory and symbolic link the socket's path passes through, in the order the
    /// kernel walks it when systemd connects (a link's target walked in its place), as sshd's
    /// StrictModes checks them: each directory owned by root or this user and writable by no
    /// one else, unless sticky (`/tmp`: there only an entry's owner may rename or remove it, so
    /// an entry of another user's in a sticky directory, a link included, is refused). Whoever
    /// may rename an entry on that walk could put another directory, with their own socket, in
    /// the place of the socket's, and serve their values to systemd; the directories of the
    /// path as given count, not only those of its real path (a link in another user's
    /// directory is theirs to point elsewhere).
    private static func checkAncestors(of directory: String) throws(CredentialVaultError) {
        var pending: [Substring] = directory.split(separator: "/").reversed()
        if !directory.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else { throw .invalidArgument("the working directory cannot be inspected") }
            pending += String(cString: cwd).split(separator: "/").reversed()
            free(cwd)
        }
        var current = "/"
        var info = stat()
        guard lstat(current, &info) == 0 else { throw .invalidArgument("the socket's ancestor directory / cannot be inspected") }
        try checkAncestor(current, info)
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                current = parent(of: current)  // passed through, and checked, on the way here
                continue
            }
            let next = (current == "/" ? "" : current) + "/" + component
            guard lstat(next, &info) == 0 else { throw .invalidArgument("the socket's ancestor directory \(next) cannot be inspected") }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                links += 1
                var parentInfo = stat()
                guard links <= 40, lstat(current, &parentInfo) == 0, let target = linkTarget(next) else {
                    throw .invalidArgument("the socket's path cannot be followed at \(next)")
                }
                if parentInfo.st_mode & S_ISVTX != 0 && !ownedWell(info) {
                    throw .permissionDenied(
                        "the socket's path goes through the symbolic link \(next), which belongs to another user: they could point it elsewhere and put another socket in the place of this one; put the socket under directories of root's or this user's (/run/credvault)")
                }
                if target.hasPrefix("/") { current = "/" }
                pending += target.split(separator: "/").reversed()
            case S_IFDIR:
                try checkAncestor(next, info)
                current = next
            default:
                throw .invalidArgument("the socket's ancestor \(next) is not a directory")
            }
        }
    }

    /// One directory on the socket's path (see `checkAncestors`).
    private static func checkAncestor(_ path: String, _ info: stat) throws(CredentialVaultError) {
        guard ownedWell(info), info.st_mode & 0o022 == 0 || info.st_mode & S_ISVTX != 0 else {
            throw .permissionDenied(
                "the socket's ancestor directory \(path) belongs to another user or is writable by others: whoever controls it could put another socket in the place of this one; put the socket under directories of root's or this user's (/run/credvault)")
        }
    }

    private static func ownedWell(_ info: stat) -> Bool { info.st_uid == geteuid() || info.st_uid == 0 }

    private static func parent(of path: String) -> String {
        path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "/"
    }

    /// The target of the symbolic link `path`, `nil` when it cannot be read.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a socket of this user's that no server answers on; refuses anything else.
    private static func removeStale(_ path: String, _ address: UnixAddress) throws(CredentialVaultError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == geteuid() else {
            throw .invalidArgument("\(path) exists and is not a socket of this user's: remove it or choose another path")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard probe >= 0 else { throw .io("cannot create a socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(probe) }
        let connected = address.withSocketAddress { connect(probe, $0, $1) }
        // A non-blocking connect to a listening AF_UNIX socket succeeds or says EAGAIN (its
        // backlog is full): either way a server is there.
        if connected == 0 || errno == EAGAIN { throw .busy }
        unlink(path)
    }
}
