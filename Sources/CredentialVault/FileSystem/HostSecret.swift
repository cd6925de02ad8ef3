import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The random per-host secret behind the device key: 32 bytes in a 0600 file in a 0700
/// directory, created once with O_EXCL so that two processes racing to create it agree.
enum HostSecret {
    static let size = 32

    static func loadOrCreate(at url: URL) throws(CredentialVaultError) -> SecureBytes {
        if let existing = try load(url) { return existing }
        try PrivateFiles.ensurePrivateDirectory(url.deletingLastPathComponent())
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
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
            unlink(url.path)
            throw PrivateFiles.error(errno, "cannot write the host secret \(url.path)")
        }
        try AtomicFile.syncDirectory(url.deletingLastPathComponent().path)
        return SecureBytes(copying: secret)
    }

    private static func load(_ url: URL) throws(CredentialVaultError) -> SecureBytes? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        try PrivateFiles.checkPrivate(url.path, isDirectory: false)
        guard var bytes = try PrivateFiles.read(url.path, limit: 4096) else { return nil }
        defer { wipe(&bytes) }
        guard bytes.count == size else {
            throw .corrupted("the host secret \(url.path) has the wrong size; restore it or remove it (device-only credentials sealed with it are then lost)")
        }
        return SecureBytes(copying: bytes)
    }
}
