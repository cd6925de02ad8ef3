#if canImport(Glibc)
import Glibc
#endif

/// The one reader of small files that hold a secret: key files (`VaultSecret.keyFile`) and the
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
        guard let secret = try read(FileLocation(path: path), what: what, limit: limit) else {
            throw .invalidArgument("cannot read \(what) \(path): it does not exist")
        }
        return secret
    }

    /// The contents of the secret file at `location` (see `read(_:what:limit:)`), owned as
    /// `owners` allows; `nil` when it does not exist.
    static func read(
        _ location: FileLocation, what: String, limit: Int, owners: PrivateFiles.Owners = .user
    ) throws(CredentialVaultError) -> SecureBytes? {
        let path = location.path
        // The size is checked here, not by `open` (which calls an oversized vault corrupted):
        // a secret file too large is a wrong argument.
        guard let (fd, info) = try PrivateFiles.open(location, rules: .init(limit: .max, owners: owners)) else { return nil }
        defer { close(fd) }
        guard Int(info.st_size) <= limit else { throw .invalidArgument("\(what) \(path) is larger than \(limit) bytes") }
        // One byte more than the size fstat saw: a file that grew after fstat is caught, and a
        // large limit costs no guarded memory for a small file.
        let expected = Int(info.st_size)
        let buffer = SecureBytes(count: expected + 1)
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
        guard length <= expected else { throw .io("\(what) \(path) grew while it was read: read it again when nothing writes it") }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }
}
