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
/// in `SecureBytes` is wiped when released). While `TPMTurn.stuckLimit` abandoned workers of a
/// TPM are still waiting, a further operation on it starts no thread: it waits (within its own
/// deadline) for one of them to finish, and gives `timedOut` if none does.
///
/// Operations of this process on one TPM (one TCTI string) run one at a time: without a
/// resource manager (swtpm, /dev/tpm0) the TPM's three object slots are shared by every
/// connection, and tcti-swtpm connects anew for each command, so two operations would
/// interleave their commands and run out of slots (measured: TPM2_RC_OBJECT_MEMORY). Other
/// processes can still interleave with ours there; /dev/tpmrm0 (the kernel's resource
/// manager) isolates them.
enum TPMWorker {
    /// One turn per TCTI string.
    private static let turns = Mutex<[String: TPMTurn]>([:])

    /// The turn of the TPM `tcti`.
    private static func turn(for tcti: String) -> TPMTurn {
        turns.withLock { table in
            if let turn = table[tcti] { return turn }
            let turn = TPMTurn()
            table[tcti] = turn
            return turn
        }
    }

    /// `body`'s result, or `timedOut` when it takes longer than `deadline`.
    static func run<T: Sendable>(
        tcti: String, deadline: Duration, _ body: @escaping @Sendable (Abandonment) throws(CredentialVaultError) -> T
    ) throws(CredentialVaultError) -> T {
        let end = DispatchTime.now() + nanoseconds(deadline)
        let turn = turn(for: tcti)
        try turn.waitForRoom(until: end)
        let outcome = Outcome<T>(turn: turn)
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
        private let turn: TPMTurn
        private let done = DispatchSemaphore(value: 0)
        private let result = Mutex<Result<T, CredentialVaultError>?>(nil)

        init(turn: TPMTurn) {
            self.turn = turn
        }

        func finish(_ value: Result<T, CredentialVaultError>) {
            if abandonment.finish() {
                result.withLock { $0 = value }
            } else {
                // Abandoned: the result (a secret) is released here and wiped by SecureBytes.
                turn.abandonedWorkerFinished()
            }
            done.signal()
        }

        func wait(until end: DispatchTime) -> Result<T, CredentialVaultError>? {
            if done.wait(timeout: end) == .success { return take() }
            // Too late: abandon it, unless it finished in this very moment.
            if abandonment.abandon() {
                turn.workerAbandoned()
                return nil
            }
            done.wait()
            return take()
        }

        private func take() -> Result<T, CredentialVaultError>? {
            result.withLock { value in
                defer { value = nil }
                return value
            }
        }
    }
}

/// One TPM's turn: the lock its operations take one after another, and how many abandoned
/// workers are still waiting for it (with the callers waiting for room).
private final class TPMTurn: Sendable {
    /// At most this many abandoned workers per TPM: beyond, callers wait for one to finish.
    static let stuckLimit = 2

    /// Held by a worker for its whole operation.
    let exclusive = Mutex(())

    private struct Stuck {
        var count = 0
        /// Callers waiting for room, each woken (all of them) when a worker finishes.
        var waiters: [DispatchSemaphore] = []
    }
    private let stuck = Mutex(Stuck())

    /// Returns once fewer than `stuckLimit` abandoned workers wait; `timedOut` at `end`.
    func waitForRoom(until end: DispatchTime) throws(CredentialVaultError) {
        while true {
            let waiter: DispatchSemaphore? = stuck.withLock { state in
                guard state.count >= Self.stuckLimit else { return nil }
                let waiter = DispatchSemaphore(value: 0)
                state.waiters.append(waiter)
                return waiter
            }
            guard let waiter else { return }
            guard waiter.wait(timeout: end) == .success else {
                stuck.withLock { $0.waiters.removeAll { $0 === waiter } }
                throw .timedOut
            }
        }
    }

    func workerAbandoned() {
        stuck.withLock { $0.count += 1 }
    }

    func abandonedWorkerFinished() {
        let waiters = stuck.withLock { state in
            state.count -= 1
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }
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
