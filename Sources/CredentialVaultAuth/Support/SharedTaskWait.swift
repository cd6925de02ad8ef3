import Synchronization

/// Waiting for a task that several callers share (a single-flight refresh or token request)
/// without tying it to any one of them: a cancelled caller stops waiting at once, and the
/// shared task goes on for the others (it may be persisting a rotated refresh token).
enum SharedTaskWait {
    /// `task`'s result, or `nil` as soon as the calling task is cancelled.
    static func result<T: Sendable>(of task: Task<T, any Error>) async -> Result<T, any Error>? {
        let waiter = OnceResumed<Result<T, any Error>?>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.install(continuation)
                Task { waiter.resume(with: await task.result) }
            }
        } onCancel: {
            waiter.resume(with: nil)
        }
    }
}

/// A continuation resumed by whichever comes first (the result or a cancellation), exactly
/// once, even when the cancellation arrives before the continuation is installed.
private final class OnceResumed<Value: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Value, Never>?)
        case resumed(Value)
    }

    private let state = Mutex(State.waiting(nil))

    func install(_ continuation: CheckedContinuation<Value, Never>) {
        let early: Value? = state.withLock { s in
            if case .resumed(let value) = s { return value }
            s = .waiting(continuation)
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(with value: Value) {
        let continuation: CheckedContinuation<Value, Never>?? = state.withLock { s in
            guard case .waiting(let continuation) = s else { return nil }
            s = .resumed(value)
            return .some(continuation)
        }
        if case .some(.some(let continuation)) = continuation { continuation.resume(returning: value) }
    }
}
