import Synchronization

/// Runs async work against a deadline.
enum Deadline {
    /// Runs `body`; if it has not finished after `timeout`, cancels it and throws
    /// `AuthError.timedOut` at once. Unlike a task group, this does not wait for `body` to
    /// acknowledge the cancellation (URLSession on Linux may hold on until its own whole-second
    /// timeout), so the caller gets its answer at the deadline even on a loaded machine.
    static func run<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let gate = ResumeOnce<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let work = Task {
                    do { gate.resume(.success(try await body())) } catch { gate.resume(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    gate.resume(.failure(AuthError.timedOut))
                }
                gate.start(continuation) {
                    work.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            gate.resume(.failure(CancellationError()))
        }
    }
}

/// Resumes a continuation exactly once, with whichever outcome comes first, then runs the
/// clean-up (cancelling the loser).
private final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var cleanup: (@Sendable () -> Void)?
        var early: Result<T, any Error>?
        var done = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>, cleanup: @escaping @Sendable () -> Void) {
        let early: Result<T, any Error>? = state.withLock { s in
            if let early = s.early {
                s.done = true
                return early
            }
            s.continuation = continuation
            s.cleanup = cleanup
            return nil
        }
        if let early {
            cleanup()
            continuation.resume(with: early)
        }
    }

    func resume(_ result: Result<T, any Error>) {
        let taken: (CheckedContinuation<T, any Error>, (@Sendable () -> Void)?)? = state.withLock { s in
            guard !s.done else { return nil }
            guard let continuation = s.continuation else {
                if s.early == nil { s.early = result }
                return nil
            }
            s.done = true
            s.continuation = nil
            defer { s.cleanup = nil }
            return (continuation, s.cleanup)
        }
        guard let (continuation, cleanup) = taken else { return }
        cleanup?()
        continuation.resume(with: result)
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
