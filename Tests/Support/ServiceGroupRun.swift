#if ServiceLifecycle
import Logging
import ServiceLifecycle

/// Runs `services` in a real `ServiceGroup` (its log kept by a `LogCapture`) on a task of its
/// own: the group, to shut down gracefully, and the task, to await or cancel. `ended` arrives
/// when the group's `run()` has returned, so a test can tell "returned" from "still running"
/// without a duration.
package func startServiceGroup(_ services: [any Service], ended: Arrivals) -> (ServiceGroup, Task<Void, any Error>) {
    let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: LogCapture().logger()))
    let running = Task {
        defer { ended.arrive() }
        try await group.run()
    }
    return (group, running)
}
#endif
