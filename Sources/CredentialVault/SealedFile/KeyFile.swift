#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

extension VaultSecret {
    /// The size of a key file `createKeyFile(at:)` writes: 32 random bytes (256 bits).
    public static let keyFileBytes = 32

    /// Creates a new key file at `url` (32 random bytes, mode 0600, made durable with its
    /// directory entry) and returns the key that names it, `.keyFile(url)`; what
    /// `credvault keygen` does.
    ///
    /// The directory must exist, belong to the user (or root) and not be writable by others
    /// (`permissionDenied`: another user could swap the key file); it is opened once and the
    /// file made, checked, removed on failure and made durable through that descriptor, never
    /// by path again. Never replaces anything: an existing file, or a symbolic link, at the
    /// name is `invalidArgument`, and nothing is changed. If writing fails the new file is
    /// removed; a crash in the middle can leave a file shorter than 32 bytes, which no vault
    /// accepts as a key (it never passes for a weaker key).
    public static func createKeyFile(at url: URL) throws(CredentialVaultError) -> VaultSecret {
        let path = url.path
        let name = url.lastPathComponent
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw .invalidArgument("\(path) does not name a file")
        }
        let directoryPath = url.deletingLastPathComponent().path
        let directory = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw PrivateFiles.error(errno, "cannot open the directory \(directoryPath)") }
        defer { close(directory) }
        var info = stat()
        guard fstat(directory, &info) == 0 else { throw PrivateFiles.error(errno, "cannot check the directory \(directoryPath)") }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw .permissionDenied("\(directoryPath) belongs to another user; keep the key file in a directory of yours")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw .permissionDenied(
                "\(directoryPath) is writable by other users (mode \(String(info.st_mode & 0o7777, radix: 8))); keep the key file in a private directory")
        }
        // O_EXCL with O_CREAT also refuses a symbolic link at the name, dangling or not.
        let fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw .alreadyExists("\(path) (a key file is never overwritten): use it, or choose another path") }
            throw PrivateFiles.error(code, "cannot create the key file \(path)")
        }
        var created = stat()
        _ = fstat(fd, &created)
        var done = false
        defer {
            close(fd)
            // Removed only while the name is still the file made here.
            var current = stat()
            if !done, fstatat(directory, name, &current, AT_SYMLINK_NOFOLLOW) == 0,
                current.st_dev == created.st_dev, current.st_ino == created.st_ino
            {
                unlinkat(directory, name, 0)
            }
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
        guard fsync(directory) == 0 else { throw PrivateFiles.error(errno, "cannot make the key file \(path) durable") }
        done = true
        return .keyFile(url)
    }

    /// `createKeyFile(at:)` off the caller's thread (its `fsync`s).
    public static func createKeyFile(at url: URL) async throws(CredentialVaultError) -> VaultSecret {
        try await StoreThreads.keyDerivation.run { _ throws(CredentialVaultError) in try VaultSecret.createKeyFile(at: url) }
    }
}
