#if canImport(Glibc)
import Glibc
#endif

/// A directory opened once and checked with `fstat` on that descriptor (a directory, the
/// user's, mode 0700 or stricter; a vault's own directory may be root's and readable by others,
/// never writable by them: `PrivateFiles.Owners`). Files in it are then opened, renamed and made durable through
/// the descriptor (`FileLocation`), never by path again: renaming the directory away and putting
/// another in its place afterwards cannot redirect a write to the impostor. The path may pass
/// through symbolic links (it is resolved once, here); what is checked is the directory reached.
package final class PrivateDirectory: Sendable {
    /// The path it was opened by, for messages.
    package let path: String
    let fd: Int32
    /// Device and inode: the same for every path that reaches this directory.
    let identity: String

    private init(path: String, fd: Int32, info: stat) {
        self.path = path
        self.fd = fd
        identity = "\(info.st_dev):\(info.st_ino)"
    }

    deinit { close(fd) }

    /// Opens and checks an existing directory; `nil` when there is none at `path`.
    /// `owners` says who may own it and which mode bits are allowed (see `PrivateFiles.Owners`).
    package static func open(_ path: String, owners: PrivateFiles.Owners = .user) throws(CredentialVaultError) -> PrivateDirectory? {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ENOTDIR { throw .invalidArgument("\(path) is not a directory") }
            throw PrivateFiles.error(errno, "cannot open the directory \(path)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw PrivateFiles.error(code, "cannot inspect \(path)")
        }
        do throws(CredentialVaultError) {
            try PrivateFiles.checkOwnerAndMode(info, path: path, isDirectory: true, owners: owners)
        } catch {
            close(fd)
            throw error
        }
        return PrivateDirectory(path: path, fd: fd, info: info)
    }

    /// Creates the directory (mode 0700, and missing parents 0700 too; existing parents are not
    /// checked, they may be shared like /var/lib) unless it exists, then opens and checks it.
    package static func create(_ path: String, owners: PrivateFiles.Owners = .user) throws(CredentialVaultError) -> PrivateDirectory {
        if let home = XDGDirectories.missingHome(under: path) {
            throw .notAvailable(
                "\(path) is a default location under the home directory \(home) ($HOME), which does not exist, and a home directory is not created for this: set XDG_DATA_HOME and XDG_STATE_HOME (a systemd service: StateDirectory=), or name the vault's path")
        }
        try makeDirectories(path)
        guard let directory = try open(path, owners: owners) else { throw .io("cannot create the directory \(path)") }
        return directory
    }

    private static func makeDirectories(_ path: String) throws(CredentialVaultError) {
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        if mkdir(path, 0o700) != 0 {
            if errno == EEXIST { return }
            guard errno == ENOENT, let slash, slash != path.startIndex else { throw PrivateFiles.error(errno, "cannot create the directory \(path)") }
            try makeDirectories(parent)
            if mkdir(path, 0o700) != 0 {
                if errno == EEXIST { return }
                throw PrivateFiles.error(errno, "cannot create the directory \(path)")
            }
        }
        // The new entry made durable in its parent: after a power cut, a directory that a file
        // in it (a vault, a counter) was made durable in is still there.
        let fd = Glibc.open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    /// fsync of the directory: makes the renames and creations in it durable.
    func sync() throws(CredentialVaultError) {
        guard fsync(fd) == 0 else { throw PrivateFiles.error(errno, "cannot flush \(path)") }
    }

    /// Checks that `path` still reaches this directory (`stat` by path, device and inode against
    /// the descriptor's), after a change made through the descriptor: when the directory was
    /// moved or replaced since it was opened, the change went to the directory opened, not to
    /// what is at `path` now, and the caller must hear it. Throws `io` saying so.
    func checkStillAtPath(after change: String) throws(CredentialVaultError) {
        var info = stat()
        if stat(path, &info) == 0, "\(info.st_dev):\(info.st_ino)" == identity { return }
        throw .io(
            "\(change) was made in the directory that was opened as \(path), which is no longer at \(path) (it was moved or replaced meanwhile): what is at \(path) now was not changed; use the vault where that directory is now, or move it back")
    }

    /// The names of the directory's entries (`.` and `..` left out); empty when it cannot be read.
    func names() -> [String] {
        // A descriptor of its own: reading entries moves the offset of the open file description.
        let listing = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard listing >= 0, let stream = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
