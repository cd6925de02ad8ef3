#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The sealed file's lock: two exclusive `FileLock`s, taken in this order and both or neither.
///
/// 1. **The lock file** `<vault>.lock`, in the vault's directory, opened through its descriptor
///    like every private file: not through a symbolic link, and only when it is a regular file
///    of the user's with mode 0600 (a FIFO, a link or another user's file is refused, never
///    locked). Every version of the library takes it; it also orders the creators of a vault.
/// 2. **The vault file itself**, when there is one. A lock file can be removed (by hand, by a
///    clean-up of "stale" locks) while a holder has it, and the next process then locks a new
///    file of the same name: two holders. The vault file is only ever replaced by a holder (a
///    rewrite), and a holder locks the new file before renaming it into place (`adopt`), so the
///    file that has the vault's name is always locked by whoever writes it.
///
/// Each lock is kept only when the locked file still is the file of that name after `flock`
/// (`FileLock.attempt`); otherwise the name is opened again. Waiting is bounded: past the
/// deadline the caller gets `busy`, never a hang.
final class VaultLock: Sendable {
    private let lockFile: FileLock
    private let vaultFile: Mutex<FileLock?>
    /// `release()` called; writes in progress under the lock (`enter`) and not yet `leave`d.
    private let usage = Mutex<(released: Bool, users: Int)>((false, 0))

    private init(lockFile: FileLock, vaultFile: FileLock?) {
        self.lockFile = lockFile
        self.vaultFile = Mutex(vaultFile)
    }

    deinit { closeFiles() }

    /// The locks this task holds through `withExclusiveAccess`, by `SealedFileStore.lockID`: the
    /// store's own writes inside the body do not lock again (flock would refuse them), and
    /// hand the new vault file of a rewrite to the lock held (`adopt`).
    ///
    /// A task-local is inherited by every `Task {}` started inside the body, which may outlive
    /// it: such a task finds this lock after `withExclusiveAccess` released it. So a write never
    /// trusts it blindly: it `enter`s it, which fails once it is released (the write then takes
    /// the lock itself), and a release waits for the writes inside to `leave` before the files
    /// are closed, so a write that started under the lock finishes under it.
    @TaskLocal static var held: [String: VaultLock] = [:]

    /// The lock held by this task for `lockID`, entered for one write (`leave()` after it), or
    /// `nil` when there is none or it was released.
    static func enterHeld(_ lockID: String) -> VaultLock? {
        guard let lock = held[lockID], lock.enter() else { return nil }
        return lock
    }

    /// The lock file of the vault at `vault`.
    static func lockFileLocation(of vault: FileLocation) -> FileLocation { vault.sibling(vault.name + ".lock") }

    /// Starts a write under this lock; `false` once it is released.
    func enter() -> Bool {
        usage.withLock { u in
            if u.released { return false }
            u.users += 1
            return true
        }
    }

    /// Ends a write started with `enter()`; the last one out closes a released lock.
    func leave() {
        let close = usage.withLock { u in
            u.users -= 1
            return u.released && u.users == 0
        }
        if close { closeFiles() }
    }

    /// Releases both locks, at once or, while writes entered it, when the last one leaves.
    /// Idempotent; never waits.
    func release() {
        let close = usage.withLock { u in
            u.released = true
            return u.users == 0
        }
        if close { closeFiles() }
    }

    private func closeFiles() {
        vaultFile.withLock { $0?.release() }
        lockFile.release()
    }

    /// Makes `newVaultFile` (the locked file a rewrite just renamed into the vault's name) the
    /// vault file this lock holds, releasing the lock of the file it replaced.
    func adopt(_ newVaultFile: FileLock) {
        let old = vaultFile.withLock { (current: inout FileLock?) -> FileLock? in
            defer { current = newVaultFile }
            return current
        }
        old?.release()
    }

    /// Observers of refused attempts, by vault path: a seam for tests that must know a writer
    /// is waiting for a lock (it polls, so the kernel shows no waiter). Empty in applications.
    private static let refusedAttemptObservers = Mutex<[String: @Sendable () -> Void]>([:])

    /// Calls `observer` on each attempt at the lock of the vault at `path` that found it held,
    /// until `stopObservingRefusedAttempts(at:)`.
    package static func observeRefusedAttempts(at path: String, _ observer: @escaping @Sendable () -> Void) {
        refusedAttemptObservers.withLock { $0[path] = observer }
    }

    /// Ends `observeRefusedAttempts(at:)`.
    package static func stopObservingRefusedAttempts(at path: String) {
        _ = refusedAttemptObservers.withLock { $0.removeValue(forKey: path) }
    }

    /// Tries once, never waits; `nil` when another holder has either lock.
    static func tryAcquire(_ vault: FileLocation) throws(CredentialVaultError) -> VaultLock? {
        let acquired = try tryAcquireOnce(vault)
        if acquired == nil, let observer = refusedAttemptObservers.withLock({ $0.isEmpty ? nil : $0[vault.path] }) { observer() }
        return acquired
    }

    private static func tryAcquireOnce(_ vault: FileLocation) throws(CredentialVaultError) -> VaultLock? {
        let lockLocation = lockFileLocation(of: vault)
        guard case .locked(let lockFile) = try lock(lockLocation, create: true) else { return nil }
        do throws(CredentialVaultError) {
            switch try lock(vault, create: false) {
            case .locked(let vaultFile): return VaultLock(lockFile: lockFile, vaultFile: vaultFile)
            case .missing: return VaultLock(lockFile: lockFile, vaultFile: nil)  // creating, or it was removed
            case .held:
                lockFile.release()
                return nil
            }
        } catch {
            lockFile.release()
            throw error
        }
    }

    /// Acquires the lock, polling with a growing pause (0.5 ms up to 20 ms) until `timeout`;
    /// a long wait is logged through `log`.
    static func acquire(_ vault: FileLocation, timeout: Duration, log: LockWaitLog? = nil) throws(CredentialVaultError) -> VaultLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        var log = log
        while true {
            if let lock = try attempt(vault, deadline: deadline, log: &log) { return lock }
            PlainThread.sleep(pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// Async form: the same bounded polling, suspending instead of blocking a thread (each
    /// attempt is a few non-blocking system calls: `open` with `O_NONBLOCK`, `flock` with
    /// `LOCK_NB`, `fstat`). Cancelling the task ends the wait at once with `cancelled`.
    static func acquire(_ vault: FileLocation, timeout: Duration, log: LockWaitLog? = nil) async throws(CredentialVaultError) -> VaultLock {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(500)
        var log = log
        while true {
            if Task.isCancelled { throw .cancelled }
            if let lock = try attempt(vault, deadline: deadline, log: &log) { return lock }
            do { try await Task.sleep(for: min(pause, max(deadline - ContinuousClock.now, .zero))) } catch { throw .cancelled }
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// One attempt of a bounded wait: the lock, or `nil` (pause and try again); `busy` once
    /// `deadline` has passed. A long wait is logged through `log`.
    private static func attempt(
        _ vault: FileLocation, deadline: ContinuousClock.Instant, log: inout LockWaitLog?
    ) throws(CredentialVaultError) -> VaultLock? {
        if let lock = try tryAcquire(vault) {
            log?.acquired()
            return lock
        }
        log?.refused()
        if ContinuousClock.now >= deadline {
            log?.gaveUp()
            throw .busy
        }
        return nil
    }

    private enum Outcome {
        case locked(FileLock)
        case held
        case missing
    }

    /// How often a lock whose file lost its name at once is tried again before the attempt
    /// counts as "held" (the caller's polling then goes on until its deadline).
    private static let staleRetries = 8

    /// Locks the file `location` names (creating it with `create`), checked like every private
    /// file (`PrivateFiles.open`), opening the name again while the locked file turns out not to
    /// be the named one any more.
    private static func lock(_ location: FileLocation, create: Bool) throws(CredentialVaultError) -> Outcome {
        let rules = create ? PrivateFiles.Rules(limit: .max) : .vault
        for _ in 0..<staleRetries {
            guard let (fd, _) = try PrivateFiles.open(location, writable: create, create: create, rules: rules) else {
                if create { throw .io("cannot create the lock file \(location.path)") }
                return .missing
            }
            switch FileLock.attempt(fd, named: location.name, in: location.directoryFD) {
            case .success(.locked(let lock)): return .locked(lock)
            case .success(.held): return .held
            case .success(.stale): continue
            case .failure(let failure): throw PrivateFiles.error(failure.code, "cannot lock \(location.path)")
            }
        }
        return .held
    }
}
