import CredentialVault
import Foundation
import Synchronization

/// Runs one TPM operation (connect, commands, close) on a thread of its own and waits for it
/// at most the configured deadline, so that a TPM that does not answer never hangs the caller.
///
/// swtpm serves one connection at a time: a client that connects while another holds the TPM
/// is accepted by the kernel and then waits, unanswered, until that one closes. A blocking
/// socket read cannot be given a deadline through the TCTI, so the wait happens on the worker
/// thread; the caller gets `timedOut` at the deadline. The worker then finishes (or fails) on
/// its own when the TPM answers, and because it sees that it was abandoned it skips the
/// remaining steps that change anything (`Abandonment.check`) and drops its result (a secret
/// in `SecureBytes` is wiped when released). While `stuckLimit` abandoned workers are still
/// waiting, a further operation starts no thread: it waits (within its own deadline) for one
/// of them to finish, and gives `timedOut` if none does, so threads never pile up.
///
/// Operations of this process on one TPM (one TCTI string) run one at a time: without a resource manager
/// (swtpm, /dev/tpm0) the TPM's three object slots are shared by every connection, and
/// tcti-swtpm connects anew for each command, so two operations would interleave their
/// commands and run out of slots (measured: TPM2_RC_OBJECT_MEMORY). Other processes can
/// still interleave with ours there; /dev/tpmrm0 (the kernel's resource manager) isolates them.
enum TPMWorker {
    /// One lock per TCTI string, held by a worker for its whole operation on that TPM.
    private static let locks = Mutex<[String: TurnLock]>([:])

    /// The lock of the TPM `tcti`.
    private static func lock(for tcti: String) -> TurnLock {
        locks.withLock { table in
            if let lock = table[tcti] { return lock }
            let lock = TurnLock()
            table[tcti] = lock
            return lock
        }
    }
    /// How many workers that timed out are still waiting for the TPM.
    private static let stuck = Mutex(0)
    /// At most this many: beyond, calls wait for one to finish.
    private static let stuckLimit = 2
    /// Signalled each time an abandoned worker finishes (waiters recheck `stuck`).
    private static let drained = DispatchSemaphore(value: 0)

    /// `body`'s result, or `timedOut` when it takes longer than `deadline`.
    static func run<T: Sendable>(
        tcti: String, deadline: Duration, _ body: @escaping @Sendable (Abandonment) throws(CredentialVaultError) -> T
    ) throws(CredentialVaultError) -> T {
        let end = DispatchTime.now() + nanoseconds(deadline)
        while stuck.withLock({ $0 }) >= stuckLimit {
            guard drained.wait(timeout: end) == .success else { throw .timedOut }
        }
        let outcome = Outcome<T>()
        let turn = lock(for: tcti)
        let thread = Thread {
            let result: Result<T, CredentialVaultError>
            do throws(CredentialVaultError) {
                result = .success(
                    try turn.exclusive.withLock { (_) throws(CredentialVaultError) -> T in
                        // A caller that gave up while this waited for its turn wants nothing done.
                        try outcome.abandonment.check()
                        return try body(outcome.abandonment)
                    })
            } catch {
                result = .failure(error)
            }
            outcome.finish(result)
        }
        thread.name = "credvault-tpm"
        thread.start()
        if let result = outcome.wait(until: end) { return try result.get() }
        throw .timedOut
    }

    /// A deadline (checked: 1 ms to 10 minutes) in nanoseconds.
    private static func nanoseconds(_ deadline: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = deadline.components
        return .nanoseconds(max(0, Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)))
    }

    /// Where the worker leaves its result and the caller waits for it.
    private final class Outcome<T: Sendable>: Sendable {
        let abandonment = Abandonment()
        private let done = DispatchSemaphore(value: 0)
        private let result = Mutex<Result<T, CredentialVaultError>?>(nil)

        func finish(_ value: Result<T, CredentialVaultError>) {
            let keep = abandonment.finish()
            if keep { result.withLock { $0 = value } }
            // An abandoned worker's result (a secret) is released here and wiped by SecureBytes.
            if !keep {
                TPMWorker.stuck.withLock { $0 -= 1 }
                TPMWorker.drained.signal()
            }
            done.signal()
        }

        func wait(until end: DispatchTime) -> Result<T, CredentialVaultError>? {
            if done.wait(timeout: end) == .success {
                return result.withLock { value in
                    defer { value = nil }
                    return value
                }
            }
            // Too late: abandon it, unless it finished in this very moment.
            if abandonment.abandon() {
                TPMWorker.stuck.withLock { $0 += 1 }
                return nil
            }
            done.wait()
            return result.withLock { value in
                defer { value = nil }
                return value
            }
        }
    }
}

/// Serializes the operations on one TPM (a class: the table hands out the same one).
private final class TurnLock: Sendable {
    let exclusive = Mutex(())
}

/// Tells a worker that its caller gave up waiting: it then stops before any step that changes
/// something (sealing a new secret, writing its file, incrementing a counter).
final class Abandonment: Sendable {
    private enum State { case running, abandoned, finished }
    private let state = Mutex(State.running)

    /// Throws `timedOut` when the caller gave up.
    func check() throws(CredentialVaultError) {
        if state.withLock({ $0 }) == .abandoned { throw .timedOut }
    }

    /// The worker is done: `true` when its caller is still waiting for the result.
    fileprivate func finish() -> Bool {
        state.withLock { value in
            guard value == .running else { return false }
            value = .finished
            return true
        }
    }

    /// The caller gives up: `true` when the worker had not finished yet.
    fileprivate func abandon() -> Bool {
        state.withLock { value in
            guard value == .running else { return false }
            value = .abandoned
            return true
        }
    }
}
