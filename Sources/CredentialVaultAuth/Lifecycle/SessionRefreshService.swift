#if ServiceLifecycle
import ServiceLifecycle

/// A session manager's background refresh as a swift-service-lifecycle `Service` (trait
/// `ServiceLifecycle`), to run in the application's `ServiceGroup`.
///
/// `run()` starts the background refresh (`SessionManager.startAutoRefresh()`) and keeps it
/// running until the group shuts down gracefully (SIGTERM, say) or cancels it. Then it stops
/// scheduling refreshes and returns once a refresh already in flight has ended, its result
/// stored (`SessionManager.finishAutoRefresh()`): the refresh is never cut short, so a rotated
/// refresh token is never lost when the process exits after the group.
///
/// With `proactiveRefresh` (the default) later sign-ins restart the background refresh while
/// the service runs; after it returned, nothing does. One service per manager, run once.
public struct SessionRefreshService: Service {
    /// The manager whose session this service keeps refreshed.
    public let manager: SessionManager

    /// A service for `manager`'s background refresh.
    public init(manager: SessionManager) {
        self.manager = manager
    }

    /// Runs the background refresh until graceful shutdown or cancellation, then waits for the
    /// refresh in flight (see the type's documentation). Throws nothing: a failed refresh is
    /// the manager's published state (`SessionManager.states()`), not the end of the service.
    public func run() async {
        await manager.startAutoRefresh()
        // Returns at graceful shutdown; throws `CancellationError` when the group cancels the
        // service: either way the refresh stops the same way.
        try? await gracefulShutdown()
        await manager.finishAutoRefresh()
    }
}
#endif
