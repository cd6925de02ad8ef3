import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The sealed file's lock: an exclusive `FileLock` on a separate lock file (`<vault>.lock`).
/// Waiting is bounded: past the deadline the caller gets `busy`, never a hang.
typealias VaultLock = FileLock

extension FileLock {
    /// Tries once; `nil` when another holder has it.
    private static func tryAcquire(_ path: String) throws(CredentialVaultError) -> FileLock? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFiles.error(errno, "cannot open the lock file \(path)") }
        switch tryLock(fd) {
        case .success(let lock): return lock
        case .failure(let failure): throw PrivateFiles.error(failure.code, "cannot lock \(path)")
        }
    }

    /// Acquires the lock, polling with a growing pause (0.5 ms up to 20 ms) until `timeout`.
    static func acquire(_ path: String, timeout: Duration) throws(CredentialVaultError) -> FileLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        while true {
            if let lock = try tryAcquire(path) { return lock }
            if ContinuousClock.now >= deadline { throw .busy }
            Thread.sleep(forTimeInterval: pause.timeInterval)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// Async form: the same bounded polling, suspending instead of blocking a thread.
    static func acquire(_ path: String, timeout: Duration) async throws(CredentialVaultError) -> FileLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        while true {
            if let lock = try tryAcquire(path) { return lock }
            if ContinuousClock.now >= deadline { throw .busy }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }
}
