/// Runs async work against a deadline.
enum Deadline {
    /// Runs `body`; if it has not finished after `timeout`, cancels it and throws `AuthError.timedOut`.
    static func run<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw AuthError.timedOut
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw AuthError.timedOut }
            return first
        }
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// A duration of `value` seconds (fractional allowed).
    static func seconds(fractional value: Double) -> Duration {
        .milliseconds(Int64((value * 1000).rounded()))
    }
}
