import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The random per-host secret behind the device key: 32 bytes in a 0600 file in a 0700
/// directory, both checked on every load (`PrivateDirectory`, `PrivateFiles.open`), created with
/// O_EXCL so that two processes racing to create it agree.
///
/// A new secret is made only when the caller says no credential needs the old one: a missing
/// secret that a vault still depends on is an error that says so, never silently replaced (a
/// new secret would make the device-only credentials sealed with the old one unreadable for good).
enum HostSecret {
    static let size = 32

    /// Why a missing host secret cannot simply be made anew: what depends on it.
    enum Need: Sendable {
        /// Nothing depends on an older secret: a new one may be made.
        case none
        /// This many device-only records of a vault were sealed with it.
        case deviceOnlyRecords(Int)
        /// The vault is unlocked with the device key.
        case deviceKeyVault
    }

    /// The host secret at `url`, made when missing and `need()` says nothing depends on an
    /// older one (evaluated only then).
    static func loadOrCreate(at url: URL, need: () -> Need) throws(CredentialVaultError) -> SecureBytes {
        if let existing = try load(url) { return existing }
        switch need() {
        case .none: break
        case .deviceOnlyRecords(let count): throw missing(url, losing: "the \(count) device-only credential\(count == 1 ? "" : "s") in this vault")
        case .deviceKeyVault: throw missing(url, losing: "this vault, which is unlocked with the device key,")
        }
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
            throw .corrupted("the host secret \(url.path) has the wrong size; restore it from a backup (device-only credentials sealed with it cannot be read without it)")
        }
        return SecureBytes(copying: bytes)
    }

    /// What happened, what is lost, how to recover.
    private static func missing(_ url: URL, losing what: String) -> CredentialVaultError {
        .notAvailable(
            "the host secret \(url.path) is missing, and \(what) can only be read with it: restore that file from a backup of this machine (if the vault was copied from another machine, it opens only there); no new host secret was made and nothing was changed")
    }
}
