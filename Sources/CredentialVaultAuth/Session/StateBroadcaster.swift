import Foundation
import Synchronization

/// Holds the current `AuthState` and hands it to every subscriber's `AsyncStream`.
/// Consecutive identical states are published once.
final class StateBroadcaster: Sendable {
    private struct State {
        var current: AuthState
        /// The session last known to be stored: kept while a refresh runs (`.refreshing`), gone
        /// when the state says there is none.
        var known: SessionSummary?
        var continuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    }

    private let state: Mutex<State>

    init(initial: AuthState) { state = Mutex(State(current: initial, known: initial.session)) }

    var current: AuthState { state.withLock { $0.current } }

    /// The session last known to be stored (see `SessionManager.hasUsableSession`).
    var knownSession: SessionSummary? { state.withLock { $0.known } }

    func publish(_ new: AuthState) { update { _ in new } }

    /// Publishes what `transition` makes of the current state, atomically (two racing updates
    /// each see the other's result).
    func update(_ transition: (AuthState) -> AuthState) {
        let (new, targets): (AuthState, [AsyncStream<AuthState>.Continuation]) = state.withLock { state in
            let new = transition(state.current)
            guard state.current != new else { return (new, []) }
            state.current = new
            switch new {
            case .authenticated(let summary): state.known = summary
            case .unauthenticated: state.known = nil
            case .refreshing: break
            }
            return (new, Array(state.continuations.values))
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
