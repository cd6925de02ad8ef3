#if Metrics
import CoreMetrics
#endif

/// Where every module of the package counts what operators watch (docs/API.md, "Metrics"):
/// one call per event, so the call sites need no `#if Metrics`.
///
/// With the `Metrics` trait each call creates its swift-metrics counter or timer (the backend
/// caches them by label and dimensions) in `MetricsSystem.factory`, which is a no-op until the
/// application bootstraps one, or in the factory a test gave (`init(factory:)`: the system's
/// is process-global and set once, so a test counts into its own instead). Without the trait
/// the value is empty and every call is an empty inlinable function: nothing is compiled in.
///
/// Dimensions are a fixed, small vocabulary (backend, operation kind, outcome): never a
/// credential's name, a key, a value, a user or a path.
package struct VaultMetrics: Sendable {
    #if Metrics
    /// The factory a test gave; `nil`: `MetricsSystem.factory`, read at each call so that an
    /// application may bootstrap after creating its configurations.
    private let factory: (any MetricsFactory)?

    /// Counts into `factory` (tests), or into the bootstrapped system's when `nil`.
    package init(factory: (any MetricsFactory)? = nil) { self.factory = factory }

    private var current: any MetricsFactory { factory ?? MetricsSystem.factory }

    /// Adds one to the counter `label` with `dimensions`.
    package func count(_ label: MetricLabel, _ dimensions: [(String, String)]) {
        Counter(label: label.rawValue, dimensions: dimensions, factory: current).increment()
    }

    /// Records `duration` in the timer `label` with `dimensions`.
    package func time(_ label: MetricLabel, _ dimensions: [(String, String)], _ duration: Duration) {
        Timer(label: label.rawValue, dimensions: dimensions, factory: current).recordNanoseconds(duration.nanoseconds)
    }
    #else
    /// Counts nothing: the `Metrics` trait is off.
    @inlinable package init() {}

    /// Nothing: the `Metrics` trait is off.
    @inlinable package func count(_ label: MetricLabel, _ dimensions: [(String, String)]) {}

    /// Nothing: the `Metrics` trait is off.
    @inlinable package func time(_ label: MetricLabel, _ dimensions: [(String, String)], _ duration: Duration) {}
    #endif
}

/// Every metric's name (the `credential_vault_` prefix keeps them apart from the
/// application's own). Each is documented in docs/API.md, "Metrics".
package enum MetricLabel: String, Sendable {
    /// Timer: how long a write waited for a vault's lock another process held.
    case lockWait = "credential_vault_lock_wait_seconds"
    /// Counter: waits for a vault's lock that ended in `busy`.
    case lockTimeouts = "credential_vault_lock_timeouts_total"
    /// Counter: operations that ended in `timedOut` (a daemon, device or server that did not answer).
    case timeouts = "credential_vault_timeouts_total"
    /// Counter: stored data refused as tampered with or damaged.
    case tamperDetections = "credential_vault_tamper_detections_total"
    /// Counter: older copies refused (`rolledBack`).
    case rollbackRefusals = "credential_vault_rollback_refusals_total"
    /// Counter: the fleet store's retried transactions.
    case fleetRetries = "credential_vault_fleet_retries_total"
    /// Counter: the fleet store's key rotations that completed.
    case fleetRotations = "credential_vault_fleet_rotations_total"
    /// Counter: session refreshes that asked the provider, by outcome.
    case sessionRefreshes = "credential_vault_session_refreshes_total"
    /// Timer: how long those refreshes took (retries included), by outcome.
    case sessionRefreshDuration = "credential_vault_session_refresh_seconds"
    /// Counter: unlock prompts the Secret Service showed, by outcome.
    case unlockPrompts = "credential_vault_secret_service_unlock_prompts_total"
}

extension Duration {
    /// Whole nanoseconds (saturating), for timers.
    @usableFromInline var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
