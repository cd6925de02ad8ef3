#if canImport(Glibc)
import Glibc
#endif

/// The one reader of small files that hold a secret: key files (`VaultKey.keyFile`) and the
/// CLI's passphrase files (`--passphrase-file`, `$CREDVAULT_PASSPHRASE_FILE`).
///
/// The file is opened by `PrivateFiles.open`, the rule every private file follows (no link
/// followed, a FIFO cannot block the open, `fstat` of that descriptor before a byte is read: a
/// regular file of this user's, not accessible by group or others, at most `limit` bytes), and
/// read straight into guarded memory. Errors carry the path, never contents.
package enum SecretFile {
    /// The contents of the secret file at `path` (described as `what`, for example
    /// `"the key file"`), at most `limit` bytes. `invalidArgument` when it does not exist.
    package static func read(_ path: String, what: String, limit: Int) throws(CredentialVaultError) -> SecureBytes {
        // The size is checked here, not by `open` (which calls an oversized vault corrupted):
        // a secret file too large is a wrong argument.
        guard let (fd, info) = try PrivateFiles.open(FileLocation(path: path), rules: .init(limit: .max)) else {
            throw .invalidArgument("cannot read \(what) \(path): it does not exist")
        }
        defer { close(fd) }
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
