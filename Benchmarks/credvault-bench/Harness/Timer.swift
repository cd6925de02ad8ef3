/// Times closures with `ContinuousClock`: warm-up runs first, then timed runs, each run a batch
/// of iterations long enough for the clock; the result is per operation.
enum Timer {
    private static let clock = ContinuousClock()

    /// Nanoseconds per operation over one batch of `iterations` calls.
    static func batch(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = clock.now
        for _ in 0..<iterations { try body() }
        return (clock.now - start).nanoseconds / Double(iterations)
    }

    /// The number of iterations that makes one batch last at least `plan.minBatch`.
    static func calibrate(_ plan: Plan, _ body: () throws -> Void) rethrows -> Int {
        guard plan.minBatch > .zero else { return 1 }
        var iterations = 1
        while true {
            let perOp = try batch(iterations, body)
            let total = perOp * Double(iterations)
            if total >= plan.minBatch.nanoseconds || iterations >= 1 << 24 { return iterations }
            let wanted = plan.minBatch.nanoseconds / max(perOp, 1) * 1.2
            iterations = min(max(iterations * 2, Int(wanted.rounded(.up))), 1 << 24)
        }
    }

    /// Times `body` alone.
    static func measure(_ plan: Plan, _ body: () throws -> Void) throws -> Sample {
        try withoutActuallyEscaping(body) { try measureInterleaved(plan, [$0])[0] }
    }

    /// Times several closures run by run in turn (A B, B A, A B ...), so that a burst of load on this
    /// shared machine falls on all of them alike and their ratio stays meaningful. Each closure
    /// gets its own batch size.
    static func measureInterleaved(_ plan: Plan, _ bodies: [() throws -> Void]) throws -> [Sample] {
        var iterations: [Int] = []
        for body in bodies { iterations.append(try calibrate(plan, body)) }
        for _ in 0..<plan.warmup {
            for (body, n) in zip(bodies, iterations) { _ = try batch(n, body) }
        }
        var times = Array(repeating: [Double](), count: bodies.count)
        for run in 0..<plan.runs {
            // A B, then B A: whatever the order does (a cache, a journal commit) falls on both.
            let order = run % 2 == 0 ? Array(bodies.indices) : bodies.indices.reversed()
            for index in order { times[index].append(try batch(iterations[index], bodies[index])) }
        }
        return zip(times, iterations).map { Sample(perOpNanos: $0, iterations: $1) }
    }

    /// Times one operation per run, with an untimed `setup` before each (warm-ups included).
    static func measureSingle(_ plan: Plan, setup: () throws -> Void, _ body: () throws -> Void) rethrows -> Sample {
        for _ in 0..<plan.warmup {
            try setup()
            try body()
        }
        var times: [Double] = []
        for _ in 0..<plan.runs {
            try setup()
            times.append(try batch(1, body))
        }
        return Sample(perOpNanos: times, iterations: 1)
    }
}

/// Keeps a value alive and opaque to the optimiser, so that the work producing it is not removed.
@inline(never)
@_optimize(none)
func blackHole<T>(_ value: T) {}
