#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The random per-host secret behind the device key: 32 bytes in a 0600 file in a 0700
/// directory, both checked on every load (`PrivateDirectory`, `PrivateFiles.open`). It is made
/// complete in a temp file and then linked to its name without replacing anything
/// (`AtomicFile.create`): two processes racing to make it agree on one, and nobody ever reads
/// it half written (a crash leaves it whole or absent).
///
/// **Once made, never made again automatically.** Beside it, `host-secret.id` records that a
/// secret existed on this machine: a keyed hash of the secret (it reveals nothing about it).
/// When the secret is missing but that file is there, every use is refused with `notAvailable`
/// (which file is missing, that it existed, what is lost, how to restore it) whatever vault
/// asks, and no new secret is made, because any vault on this machine may hold device-only
/// credentials sealed with the old one. To start over on purpose, remove `host-secret.id` (the
/// error says so): the next use that needs a secret makes a new one. When the whole directory
/// is gone, nothing on this machine can tell that a secret existed: then a vault that depends
/// on it still refuses (`Need`), others make a new one.
enum HostSecret {
    static let size = 32

    /// Why a missing host secret cannot simply be made anew: what depends on it.
    enum Need: Sendable {
        /// Nothing in this vault depends on an older secret: a new one may be made (unless the
        /// fingerprint file says one existed).
        case none
        /// This many device-only records of a vault were sealed with it.
        case deviceOnlyRecords(Int)
        /// The vault is unlocked with the device key.
        case deviceKeyVault
    }

    /// The name of the fingerprint file beside the secret.
    static func fingerprintName(of url: URL) -> String { url.lastPathComponent + ".id" }

    /// The host secret at `url`, made when missing, `need()` says nothing in the vault in use
    /// depends on an older one (evaluated only then) and no fingerprint file says that one
    /// existed on this machine.
    static func loadOrCreate(at url: URL, need: () -> Need) throws(CredentialVaultError) -> SecureBytes {
        if let existing = try load(url) { return existing }
        switch need() {
        case .none: break
        case .deviceOnlyRecords(let count): throw missing(url, losing: "the \(count) device-only credential\(count == 1 ? "" : "s") in this vault")
        case .deviceKeyVault: throw missing(url, losing: "this vault, which is unlocked with the device key,")
        }
        let directory = try PrivateDirectory.create(url.deletingLastPathComponent().path)
        let idLocation = FileLocation(fingerprintName(of: url), in: directory)
        if let id = try PrivateFiles.read(idLocation, limit: 4096) {
            // A first use racing this one writes the secret before its fingerprint: a fingerprint
            // that appeared after our first look may belong to a secret made meanwhile.
            if let madeMeanwhile = try load(url) { return madeMeanwhile }
            throw missing(url, losing: "every device-only credential and device-key vault on this machine sealed with it", fingerprint: id)
        }
        let location = FileLocation(url.lastPathComponent, in: directory)
        var secret = Crypto.randomBytes(size)
        defer { wipe(&secret) }
        guard try AtomicFile.create(secret, at: location) else {
            // Another process made it first: use theirs.
            guard let existing = try load(url) else { throw .io("the host secret \(url.path) vanished while it was being made; retry") }
            return existing
        }
        let made = SecureBytes(copying: secret)
        try recordFingerprint(of: made, at: idLocation)
        return made
    }

    /// The secret, read through its checked directory; `nil` when it (or its directory) is
    /// missing. Writes the fingerprint file when the secret predates it.
    private static func load(_ url: URL) throws(CredentialVaultError) -> SecureBytes? {
        guard let directory = try PrivateDirectory.open(url.deletingLastPathComponent().path),
            var bytes = try PrivateFiles.read(FileLocation(url.lastPathComponent, in: directory), limit: 4096)
        else { return nil }
        defer { wipe(&bytes) }
        guard bytes.count == size else {
            throw .notAvailable(
                "the host secret \(url.path) has \(bytes.count) bytes, not \(size): it is damaged; restore that file from a backup of this machine (device-only credentials and device-key vaults cannot be opened without it); no vault file was changed")
        }
        let secret = SecureBytes(copying: bytes)
        let idLocation = FileLocation(fingerprintName(of: url), in: directory)
        let hasFingerprint: Bool? = try? (idLocation.status() != nil)
        if hasFingerprint == false { try? recordFingerprint(of: secret, at: idLocation) }
        return secret
    }

    /// Writes the fingerprint file: a keyed hash of the secret (hex), nothing secret.
    private static func recordFingerprint(of secret: SecureBytes, at location: FileLocation) throws(CredentialVaultError) {
        let label = Array("CredentialVault host secret id v1".utf8)
        let digest = label.withUnsafeBytes { Crypto.keyedHash(key: secret, [$0]) }
        let text = "CredentialVault host secret \(PlainText.hex(digest.prefix(16)))\n"
        try AtomicFile.write(Array(text.utf8), to: location)
    }

    /// What happened, what is lost, how to recover (and, when the fingerprint file says a
    /// secret existed, how to start over on purpose).
    private static func missing(_ url: URL, losing what: String, fingerprint: [UInt8]? = nil) -> CredentialVaultError {
        var message = "the host secret \(url.path) is missing, and \(what) can only be read with it"
        if let fingerprint {
            let id = PlainText.trimmed(String(decoding: fingerprint, as: UTF8.self))
            message += " (\(url.path).id shows that it existed: \(id))"
        }
        message += ": restore that file from a backup of this machine (if the vault was copied from another machine, it opens only there); no new host secret was made and nothing was changed"
        if fingerprint != nil {
            message += ". To give those credentials up and start over with a new host secret, remove \(url.path).id"
        }
        return .notAvailable(message)
    }
}
