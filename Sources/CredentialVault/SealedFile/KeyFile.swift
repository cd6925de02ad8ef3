import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension VaultKey {
    /// The size of a key file `createKeyFile(at:)` writes: 32 random bytes (256 bits).
    public static let keyFileBytes = 32

    /// Creates a new key file at `url` (32 random bytes, mode 0600, made durable with its
    /// directory entry) and returns the key that names it, `.keyFile(url)`; what
    /// `credvault keygen` does.
    ///
    /// Never replaces anything: an existing file, or a symbolic link, at `url` is
    /// `invalidArgument`, and nothing is changed. The directory must exist. If writing fails the
    /// new file is removed; a crash in the middle can leave a file shorter than 32 bytes,
    /// which no vault accepts as a key (it never passes for a weaker key).
    public static func createKeyFile(at url: URL) throws(CredentialVaultError) -> VaultKey {
        let path = url.path
        // O_EXCL with O_CREAT also refuses a symbolic link at the name, dangling or not.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw .invalidArgument("\(path) already exists; a key file is never overwritten") }
            throw PrivateFiles.error(code, "cannot create the key file \(path)")
        }
        var done = false
        defer {
            close(fd)
            if !done { unlink(path) }
        }
        // A umask cannot widen 0600, but a default ACL could: set the mode on the descriptor.
        guard fchmod(fd, 0o600) == 0 else { throw PrivateFiles.error(errno, "cannot set the mode of \(path)") }
        let key = SecureBytes.random(count: keyFileBytes)
        let written = key.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard written, fsync(fd) == 0 else { throw PrivateFiles.error(errno, "cannot write the key file \(path)") }
        // The new name is durable only once its directory is.
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            defer { close(directory) }
            guard fsync(directory) == 0 else { throw PrivateFiles.error(errno, "cannot make the key file \(path) durable") }
        }
        done = true
        return .keyFile(url)
    }
}
