import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The random per-host secret behind the device key: 32 bytes in a 0600 file in a 0700
/// directory, both checked on every load (`PrivateDirectory`, `PrivateFiles.open`), created with
/// O_EXCL so that two processes racing to create it agree.
enum HostSecret {
    static let size = 32

    static func loadOrCreate(at url: URL) throws(CredentialVaultError) -> SecureBytes {
        if let existing = try load(url) { return existing }
        let directory = try PrivateDirectory.create(url.deletingLastPathComponent().path)
        let location = FileLocation(url.lastPathComponent, in: directory)
        let fd = openat(directory.fd, location.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 {
            // Another process created it first: use theirs.
            if errno == EEXIST, let existing = try load(url) { return existing }
            throw PrivateFiles.error(errno, "cannot create the host secret \(url.path)")
        }
        var secret = Crypto.randomBytes(size)
        defer { wipe(&secret) }
        let written = secret.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, size) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == size, synced else {
            unlinkat(directory.fd, location.name, 0)
            throw PrivateFiles.error(errno, "cannot write the host secret \(url.path)")
        }
        try directory.sync()
        return SecureBytes(copying: secret)
    }

    /// The secret, read through its checked directory; `nil` when it (or its directory) is missing.
    private static func load(_ url: URL) throws(CredentialVaultError) -> SecureBytes? {
        guard let directory = try PrivateDirectory.open(url.deletingLastPathComponent().path),
            var bytes = try PrivateFiles.read(FileLocation(url.lastPathComponent, in: directory), limit: 4096)
        else { return nil }
        defer { wipe(&bytes) }
        guard bytes.count == size else {
            throw .corrupted("the host secret \(url.path) has the wrong size; restore it or remove it (device-only credentials sealed with it are then lost)")
        }
        return SecureBytes(copying: bytes)
    }
}
