import CredentialVault
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One keyring file on disk with the secret its key comes from: read it, and change it safely
/// beside writers that take no lock (libsecret, oo7).
///
/// **Reading** opens the directory (this user's or root's, not writable by others: libsecret
/// makes `keyrings/` 0755) and the file without following links, checks it with `fstat`
/// (a regular file of this user's, 0600 or stricter, at most 64 MiB) and parses all of it
/// (`KeyringFileContents.parse`) before any item is used. A missing file is an empty keyring.
///
/// **Writing** (`update`) holds `KeyringFileLock` (CredentialVault's writers, one at a time),
/// then reads the file, applies the change to what it read, writes the result to a temp file
/// in the same directory (0600, `O_NOFOLLOW`, fsync), and just before renaming it over the
/// file checks that the file is still the version read: same `fstat` identity, size and times
/// (`AtomicFile.Fingerprint`) and the same bytes. When another program wrote meanwhile, the
/// temp file is dropped and the whole change made again on the new version (their items kept),
/// up to `attempts` times, then `busy`. The directory is fsynced after the rename. A file that
/// cannot be read (malformed, another key) is never written over: the change throws first.
///
/// **The `~` backup.** libsecret (GIO's replace with a backup) leaves the previous version as
/// `default.keyring~`; nothing reads it back, and it keeps secrets deleted or replaced since.
/// A write here never makes one and removes the one there is, so that a credential deleted
/// through this store is gone from the disk (but for the blocks the file system keeps).
final class KeyringFile: Sendable {
    /// The file's path (for messages).
    let path: String
    private let directoryPath: String
    private let name: String
    private let secret: SecureBytes
    private let lockTimeout: Duration
    /// The key of the salt and iteration count read last: a derivation costs tens of milliseconds.
    private let cachedKey = Mutex<KeyringKey?>(nil)
    /// For tests: run between a write's read and its check before the rename (another writer's
    /// change lands there). Never set otherwise.
    let beforeReplacing = Mutex<(@Sendable () -> Void)?>(nil)

    /// How many times a write is made again when another program changed the file under it.
    static let attempts = 5

    init(path: String, secret: SecureBytes, lockTimeout: Duration) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        self.secret = secret
        self.lockTimeout = lockTimeout
    }

    /// Calls `body` with the file opened (`nil` when there is no file: an empty keyring).
    func read<T>(_ body: (OpenedKeyring?) throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
        guard let directory = try PrivateDirectory.open(directoryPath, owners: .notWritableByOthers) else { return try body(nil) }
        guard let read = try load(FileLocation(name, in: directory)) else { return try body(nil) }
        return try body(try open(read.contents))
    }

    /// Applies `change` to the file (see the type): `change` gets the file as read (an empty
    /// keyring when there is none) and says whether it changed it; it may run more than once
    /// (once per version of the file), so it must work on what it is given only.
    func update<T>(
        now: Date, _ change: (inout OpenedKeyring) throws(CredentialVaultError) -> (result: T, changed: Bool)
    ) throws(CredentialVaultError) -> T {
        let directory = try PrivateDirectory.create(directoryPath, owners: .notWritableByOthers)
        let location = FileLocation(name, in: directory)
        let lock = try KeyringFileLock.acquire(beside: location, until: .now + lockTimeout)
        defer { lock.release() }
        let seconds = UInt64(max(0, now.timeIntervalSince1970))
        for _ in 0..<Self.attempts {
            let read = try load(location)
            var opened = try open(read?.contents ?? .empty(now: seconds))
            let (result, changed) = try change(&opened)
            guard changed else { return result }
            opened.contents.modified = seconds
            opened.contents.usage &+= 1
            let bytes = opened.contents.serialized()
            // A file larger than a read accepts would lock every credential in it out.
            guard bytes.count <= KeyringFileLayout.maximumFileSize else {
                throw .invalidArgument(
                    "the keyring file would grow to \(bytes.count) bytes, over the \(KeyringFileLayout.maximumFileSize) it is read at; nothing was changed")
            }
            var raced = false
            do throws(CredentialVaultError) {
                try AtomicFile.replace(bytes, at: location) { () throws(CredentialVaultError) in
                    beforeReplacing.withLock { $0 }?()
                    let current = try PrivateFiles.readVersion(location, limit: KeyringFileLayout.maximumFileSize)
                    guard current?.fingerprint == read?.fingerprint, current?.bytes == read?.bytes else {
                        raced = true
                        throw .busy
                    }
                }
            } catch {
                if raced { continue }
                throw error
            }
            removeBackup(beside: location)
            return result
        }
        throw .busy
    }

    /// The file's contents and the fingerprint and bytes of the version read; `nil` when missing.
    private func load(_ location: FileLocation) throws(CredentialVaultError)
        -> (contents: KeyringFileContents, bytes: [UInt8], fingerprint: AtomicFile.Fingerprint)?
    {
        guard let (bytes, fingerprint) = try PrivateFiles.readVersion(location, limit: KeyringFileLayout.maximumFileSize) else { return nil }
        return (try KeyringFileContents.parse(bytes), bytes, fingerprint)
    }

    private func open(_ contents: KeyringFileContents) throws(CredentialVaultError) -> OpenedKeyring {
        if let key = cachedKey.withLock({ $0 }), key.fits(salt: contents.salt, iterations: contents.iterations) {
            return try OpenedKeyring(contents, key: key)
        }
        let key = try KeyringKey.derive(from: secret, salt: contents.salt, iterations: contents.iterations)
        cachedKey.withLock { $0 = key }
        return try OpenedKeyring(contents, key: key)
    }

    /// Removes libsecret's backup of the previous version (see the type), if any.
    private func removeBackup(beside location: FileLocation) {
        _ = unlinkat(location.directoryFD, location.name + "~", 0)
    }
}
