import Synchronization

/// The cancellation of one piece of blocking work running on a store's thread: set when the
/// task that waits for the work is cancelled. Blocking code polls `isCancelled` between waits
/// (a lock wait) or registers a handler that interrupts the blocking call (a D-Bus call's
/// `GCancellable`), so a cancelled task gets its answer promptly instead of at the deadline.
package final class CancellationFlag: Sendable {
    private struct State {
        var cancelled = false
        var handlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether the waiting task was cancelled.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Runs `handler` once when the flag is set (at once when it already is).
    package func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { (s: inout State) -> Bool in
            if s.cancelled { return true }
            s.handlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Sets the flag and runs the registered handlers (each once). Idempotent.
    package func cancel() {
        let handlers = state.withLock { (s: inout State) -> [@Sendable () -> Void] in
            if s.cancelled { return [] }
            s.cancelled = true
            defer { s.handlers = [] }
            return s.handlers
        }
        for handler in handlers { handler() }
    }

    /// Throws `cancelled` when the flag is set.
    package func check() throws(CredentialVaultError) {
        if isCancelled { throw .cancelled }
    }

    /// The flag of the work running on this thread (set by `StoreThreads` around each job), so
    /// that blocking code deep in a backend can poll it without threading it through every call.
    /// `nil` on threads that are not a store's (the synchronous API: nothing to cancel).
    package static var current: CancellationFlag? {
        get { StoreThreads.currentFlag }
    }
}
