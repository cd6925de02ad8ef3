/// Exponential backoff for transient failures (network errors, timeouts, 5xx, 429). Nothing
/// else is retried: a definite answer from the provider is final.
public struct RetryPolicy: Sendable {
    /// Retries after the first attempt (default 3, so at most 4 requests).
    public var maxRetries: Int
    /// The first delay (default 0.5 s); each next one doubles, up to `maxDelay`.
    public var initialDelay: Duration
    /// The longest delay, also the cap for a 429's `Retry-After` (default 8 s).
    public var maxDelay: Duration
    /// Waits between attempts (replace it in tests to record delays instead of sleeping).
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Creates a policy.
    public init(
        maxRetries: Int = 3, initialDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(8),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.maxRetries = max(0, maxRetries)
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.sleep = sleep
    }

    /// The default: 3 retries, 0.5 s, 1 s, 2 s (with up to 20 % jitter), capped at 8 s.
    public static let `default` = RetryPolicy()

    /// No retries.
    public static let none = RetryPolicy(maxRetries: 0)

    /// The delay before retry number `attempt` (1-based) after `error`.
    func delay(before attempt: Int, after error: AuthError) -> Duration {
        if case .rateLimited(let seconds?) = error {
            return min(.seconds(max(0, seconds)), maxDelay)
        }
        let base = initialDelay * (1 << min(attempt - 1, 20))
        let jitter = Double.random(in: 0...0.2)
        return min(base + base * jitter, maxDelay)
    }

    /// Runs `operation`, retrying transient failures with backoff; `onRetry` hears each retry.
    func run<T: Sendable>(
        onRetry: (Int, AuthError, Duration) -> Void = { _, _, _ in },
        _ operation: () async throws(AuthError) -> T
    ) async throws(AuthError) -> T {
        var attempt = 0
        while true {
            do {
                return try await operation()
            } catch {
                attempt += 1
                guard error.isTransient, attempt <= maxRetries else { throw error }
                let wait = delay(before: attempt, after: error)
                onRetry(attempt, error, wait)
                do { try await sleep(wait) } catch { throw .cancelled }
            }
        }
    }
}
