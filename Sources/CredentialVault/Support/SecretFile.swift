#if canImport(Glibc)
import Glibc
#endif

/// The one rule for small files that hold a secret: key files (`VaultKey.keyFile`) and the
/// CLI's passphrase files (`--passphrase-file`, `$CREDVAULT_PASSPHRASE_FILE`).
///
/// The file is opened with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` (a symbolic link is refused, a
/// FIFO cannot block the open) and checked with `fstat` of that same descriptor before a byte
/// is read: a regular file, owned by this user, not accessible by group or others, at most
/// `limit` bytes. The bytes go straight into guarded memory. Errors carry the path, never
/// contents: `permissionDenied` (with the `chmod` to run) for a loose mode, another owner or a
/// symbolic link; `invalidArgument` for a missing file, one that is not a regular file, or a
/// larger one.
package enum SecretFile {
    /// The contents of the secret file at `path` (described as `what`, for example
    /// `"the key file"`), at most `limit` bytes.
    package static func read(_ path: String, what: String, limit: Int) throws(CredentialVaultError) -> SecureBytes {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ELOOP: throw .permissionDenied("\(what) \(path) is a symbolic link; give the file itself")
            case ENOENT, ENOTDIR: throw .invalidArgument("cannot read \(what) \(path): it does not exist")
            default: throw PrivateFiles.error(code, "cannot read \(what) \(path)")
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PrivateFiles.error(errno, "cannot inspect \(what) \(path)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .invalidArgument("\(what) \(path) is not a regular file") }
        if info.st_uid != geteuid() {
            throw .permissionDenied("\(what) \(path) belongs to another user; it must be owned by the user who reads it")
        }
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw .permissionDenied("\(what) \(path) is accessible by other users (mode \(String(mode, radix: 8))); run: chmod 600 \(path)")
        }
        guard Int(info.st_size) <= limit else { throw .invalidArgument("\(what) \(path) is larger than \(limit) bytes") }
        // One byte more than the limit: a file that grew after fstat is still caught.
        let buffer = SecureBytes(count: limit + 1)
        let length = try buffer.withUnsafeMutableBytes { (raw) throws(CredentialVaultError) -> Int in
            var done = 0
            while done < raw.count {
                let n = Glibc.read(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw PrivateFiles.error(errno, "cannot read \(what) \(path)")
                }
                if n == 0 { break }
                done += n
            }
            return done
        }
        guard length <= limit else { throw .invalidArgument("\(what) \(path) is larger than \(limit) bytes") }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }
}
