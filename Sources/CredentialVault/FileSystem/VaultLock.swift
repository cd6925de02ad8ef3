import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The sealed file's lock: an exclusive `FileLock` on a separate lock file (`<vault>.lock`, in
/// the vault's directory, opened through its descriptor). The lock file is opened like every
/// private file: not through a symbolic link, and only when it is a regular file of the user's
/// with mode 0600 (a FIFO, a link or another user's file is refused, never locked). Waiting is
/// bounded: past the deadline the caller gets `busy`, never a hang.
typealias VaultLock = FileLock

extension FileLock {
    /// Tries once, never waits; `nil` when another holder has it.
    static func tryAcquire(_ location: FileLocation) throws(CredentialVaultError) -> FileLock? {
        guard let (fd, _) = try PrivateFiles.open(location, writable: true, create: true, rules: PrivateFiles.Rules(limit: .max)) else {
            throw .io("cannot create the lock file \(location.path)")
        }
        switch tryLock(fd) {
        case .success(let lock): return lock
        case .failure(let failure): throw PrivateFiles.error(failure.code, "cannot lock \(location.path)")
        }
    }

    /// Acquires the lock, polling with a growing pause (0.5 ms up to 20 ms) until `timeout`.
    static func acquire(_ location: FileLocation, timeout: Duration) throws(CredentialVaultError) -> FileLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        while true {
            if let lock = try tryAcquire(location) { return lock }
            if ContinuousClock.now >= deadline { throw .busy }
            Thread.sleep(forTimeInterval: pause.timeInterval)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// Async form: the same bounded polling, suspending instead of blocking a thread.
    static func acquire(_ location: FileLocation, timeout: Duration) async throws(CredentialVaultError) -> FileLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        while true {
            if let lock = try tryAcquire(location) { return lock }
            if ContinuousClock.now >= deadline { throw .busy }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }
}
