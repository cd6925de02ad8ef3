/// Times a synchronous operation and its async twin in turn (A B, B A, ...), both as async
/// closures called from the same task, with the same number of iterations per batch (the sync
/// one's calibration), so that the two figures differ only by the store's async path. Run it
/// from a task on the cooperative pool (`AsyncGroup` does): a call between nonisolated async
/// functions there does not change executors, as in a server's request handler; from the main
/// actor every call would add two executor hops, the caller's cost rather than the store's.
enum AsyncTimer {
    static func measurePair(
        _ plan: Plan, sync: @escaping () throws -> Void, async: @escaping () async throws -> Void
    ) async throws -> (sync: Sample, async: Sample) {
        let iterations = try Timer.calibrate(plan, sync)
        let clock = ContinuousClock()
        let bodies: [() async throws -> Void] = [{ try sync() }, async]
        func run(_ index: Int) async throws -> Double {
            let start = clock.now
            for _ in 0..<iterations { try await bodies[index]() }
            return (clock.now - start).nanoseconds / Double(iterations)
        }
        for _ in 0..<plan.warmup {
            for index in bodies.indices { _ = try await run(index) }
        }
        var times: [[Double]] = [[], []]
        for round in 0..<plan.runs {
            for index in round % 2 == 0 ? [0, 1] : [1, 0] { times[index].append(try await run(index)) }
        }
        return (Sample(perOpNanos: times[0], iterations: iterations), Sample(perOpNanos: times[1], iterations: iterations))
    }
}
