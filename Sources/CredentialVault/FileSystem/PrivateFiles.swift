import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// POSIX file handling for secrets: private directories (0700) and files (0600), bounded reads,
/// and errors that say what to do. Errors carry paths (not secret), never contents.
enum PrivateFiles {
    /// Creates `directory` (and missing parents) with mode 0700, then checks that it is private.
    static func ensurePrivateDirectory(_ directory: URL) throws(CredentialVaultError) {
        let path = directory.path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            let parent = directory.deletingLastPathComponent()
            if parent.path != path { try ensureDirectoryExists(parent) }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw error(errno, "cannot create the directory \(path)")
            }
        }
        try checkPrivate(path, isDirectory: true)
    }

    /// Parents of the vault directory: created 0700 when missing, not checked (they may be shared, like /var/lib).
    private static func ensureDirectoryExists(_ directory: URL) throws(CredentialVaultError) {
        let path = directory.path
        if FileManager.default.fileExists(atPath: path) { return }
        let parent = directory.deletingLastPathComponent()
        if parent.path != path { try ensureDirectoryExists(parent) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw error(errno, "cannot create the directory \(path)")
        }
    }

    /// Refuses a file or directory that other users can access or that belongs to someone else:
    /// a vault in a world-readable place leaks at least its size and timing, and a writable
    /// one can be swapped under us.
    static func checkPrivate(_ path: String, isDirectory: Bool) throws(CredentialVaultError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw error(errno, "cannot inspect \(path)") }
        if info.st_uid != geteuid() {
            throw .permissionDenied("\(path) belongs to another user; the vault must be owned by the user who opens it")
        }
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 {
            let wanted = isDirectory ? "700" : "600"
            throw .permissionDenied(
                "\(path) is accessible by other users (mode \(String(mode, radix: 8))); run: chmod \(wanted) \(path)")
        }
    }

    /// Reads a whole file of at most `limit` bytes; `nil` when it does not exist.
    static func read(_ path: String, limit: Int) throws(CredentialVaultError) -> [UInt8]? {
        try readVersion(path, limit: limit)?.bytes
    }

    /// Reads a whole file and the fingerprint of the very version read (fstat of the same
    /// descriptor, so a concurrent rename cannot pair old bytes with a new fingerprint). Reads
    /// to the end of the file, not to the size fstat saw: bytes appended meanwhile (a format-3
    /// journal entry) are read too, so a commit record read along the way never names bytes
    /// beyond what was read. The fingerprint is the one from before reading: if the file
    /// changes meanwhile, the next comparison sees a difference.
    static func readVersion(_ path: String, limit: Int) throws(CredentialVaultError)
        -> (bytes: [UInt8], fingerprint: AtomicFile.Fingerprint)?
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw error(errno, "cannot open \(path)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error(errno, "cannot inspect \(path)") }
        guard Int(info.st_size) <= limit else {
            throw .corrupted("\(path) is larger than \(limit) bytes")
        }
        // One byte more than the size seen, so that reaching the end needs no second buffer.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var done = 0
        while true {
            if done == bytes.count {
                guard bytes.count <= limit else { throw .corrupted("\(path) is larger than \(limit) bytes") }
                bytes.append(contentsOf: repeatElement(0, count: min(max(bytes.count / 2, 4096), limit + 1 - bytes.count)))
            }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw error(errno, "cannot read \(path)")
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(bytes.count - done)
        return (bytes, AtomicFile.Fingerprint(info))
    }

    /// Maps an errno to a typed error whose message says what happened and that nothing changed.
    static func error(_ code: Int32, _ what: String) -> CredentialVaultError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM: return .permissionDenied("\(what): \(reason); nothing was changed")
        case ENOSPC, EDQUOT: return .io("\(what): the disk is full (\(reason)); nothing was changed")
        case EROFS: return .io("\(what): the file system is read-only; nothing was changed")
        default: return .io("\(what): \(reason)")
        }
    }
}
