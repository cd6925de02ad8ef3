import Foundation
import Synchronization

/// Holds the current `AuthState` and hands it to every subscriber's `AsyncStream`.
/// Consecutive identical states are published once.
final class StateBroadcaster: Sendable {
    private struct State {
        var current: AuthState
        var continuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    }

    private let state: Mutex<State>

    init(initial: AuthState) { state = Mutex(State(current: initial)) }

    var current: AuthState { state.withLock { $0.current } }

    func publish(_ new: AuthState) {
        let targets: [AsyncStream<AuthState>.Continuation] = state.withLock { state in
            guard state.current != new else { return [] }
            state.current = new
            return Array(state.continuations.values)
        }
        for continuation in targets { continuation.yield(new) }
    }

    /// A stream that starts with the current state, then every change.
    func stream() -> AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream<AuthState>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        let current = state.withLock { state in
            state.continuations[id] = continuation
            return state.current
        }
        continuation.yield(current)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func finishAll() {
        let targets = state.withLock { state in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in targets { continuation.finish() }
    }
}

/// Counts sign-outs, so that a refresh that started before one never writes its result back.
final class SignOutEpoch: Sendable {
    private let value = Mutex(0)
    var current: Int { value.withLock { $0 } }
    func advance() { value.withLock { $0 += 1 } }
}
