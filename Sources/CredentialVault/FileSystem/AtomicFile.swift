import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Durable, atomic replacement of a file: write a uniquely named temp file (0600) in the same
/// directory, fsync it, rename it over the target, fsync the directory. A reader sees the old
/// or the new file, never a mix; after a crash the file is the old or the new one, and once this
/// returns the new one survives power loss.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to url: URL) throws(CredentialVaultError) {
        let directory = url.deletingLastPathComponent().path
        let suffix = Crypto.randomBytes(8).map { String(format: "%02x", $0) }.joined()
        let temp = "\(directory)/.\(url.lastPathComponent).tmp-\(getpid())-\(suffix)"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFiles.error(errno, "cannot write in \(directory)") }
        var closed = false
        do throws(CredentialVaultError) {
            try writeAll(fd, bytes, what: "cannot write \(temp)")
            guard fsync(fd) == 0 else { throw PrivateFiles.error(errno, "cannot flush \(temp)") }
            closed = true
            guard close(fd) == 0 else { throw PrivateFiles.error(errno, "cannot close \(temp)") }
            guard rename(temp, url.path) == 0 else { throw PrivateFiles.error(errno, "cannot replace \(url.path)") }
        } catch {
            if !closed { close(fd) }
            unlink(temp)
            throw error
        }
        try syncDirectory(directory)
    }

    /// fsync on the directory makes the rename itself durable.
    static func syncDirectory(_ directory: String) throws(CredentialVaultError) {
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { throw PrivateFiles.error(errno, "cannot open \(directory)") }
        defer { close(dfd) }
        guard fsync(dfd) == 0 else { throw PrivateFiles.error(errno, "cannot flush \(directory)") }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], what: String) throws(CredentialVaultError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw PrivateFiles.error(errno, what)
            }
            done += n
        }
    }

    /// Identifies one version of a file: a rename gives a new inode, and size and times change
    /// with every write, so an unchanged fingerprint means an unchanged file.
    struct Fingerprint: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }

        static func == (a: Fingerprint, b: Fingerprint) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// The file's fingerprint, or `nil` when it does not exist.
    static func fingerprint(_ path: String) -> Fingerprint? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Fingerprint(info)
    }
}
