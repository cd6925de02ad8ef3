import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// The lock CredentialVault's writers of one keyring file hold from their read to their rename:
/// `flock` on the hidden file `.<name>.credential-vault.lock` beside it (created 0600, never
/// removed; a side file because the keyring file itself is replaced by each write). libsecret
/// and oo7 take no lock: against them, every write also checks that the file did not change
/// since it was read (`KeyringFile.update`). Waits as `KeyLock` does, until a deadline (`busy`).
enum KeyringFileLock {
    /// The lock file's name for the keyring file `name`.
    static func name(for file: String) -> String { ".\(file).credential-vault.lock" }

    /// Takes the lock of the keyring file at `location`, waiting until `deadline`.
    static func acquire(beside location: FileLocation, until deadline: ContinuousClock.Instant) throws(CredentialVaultError) -> FileLock {
        let name = name(for: location.name)
        return try KeyLock.poll(until: deadline) { () throws(CredentialVaultError) -> FileLock? in
            let fd = openat(location.directoryFD, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw PrivateFiles.error(errno, "cannot open the lock file \(name) beside \(location.path)") }
            switch FileLock.attempt(fd, named: name, in: location.directoryFD) {
            case .success(.locked(let lock)): return lock
            case .success: return nil
            case .failure(let failure): throw PrivateFiles.error(failure.code, "cannot lock \(name) beside \(location.path)")
            }
        }
    }
}
