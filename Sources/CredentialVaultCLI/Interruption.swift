import CredentialVault
import Synchronization

/// A long command (`migrate`) that SIGINT, SIGTERM or SIGHUP stops between two steps, with
/// what it did until then kept and reported, instead of a death in the middle of one.
///
/// The first stop signal cancels the work `run` runs (it stops at its next cancellation check);
/// later ones are ignored (see `StopSignals`).
package final class Interruption: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, signal: Int32?)>((nil, nil))

    private init() {}

    /// Takes the stop signals from now on. Call it first in the command, before any other thread
    /// is started (see `StopSignals`).
    package static func install() throws(CredentialVaultError) -> Interruption {
        let interruption = Interruption()
        try StopSignals.take { signal in
            let task = interruption.state.withLock { state in
                state.signal = signal
                return state.task
            }
            task?.cancel()
        }
        return interruption
    }

    /// The stop signal that arrived, if one did.
    package var signal: Int32? { state.withLock { $0.signal } }

    /// Runs `body` like `runBlocking`, cancelled when a stop signal arrives (or arrived before).
    package func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        // The task is forgotten once the work ended: the signal handler keeps this object for the
        // process's life, and the task's closure holds what the work used (a migration's stores),
        // which then stayed alive until exit (reported by LeakSanitizer now and then).
        defer { state.withLock { $0.task = nil } }
        return try runBlocking(body) { task in
            let interrupted = state.withLock { state in
                state.task = task
                return state.signal != nil
            }
            if interrupted { task.cancel() }
        }
    }
}
