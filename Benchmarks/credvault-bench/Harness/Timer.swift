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

    /// Times several closures run by run in turn (A B, B A, A B ...), so that a burst of load on
    /// this shared machine falls on all of them alike and their ratio stays meaningful. Each
    /// closure gets its own batch size.
    static func measureInterleaved(_ plan: Plan, _ bodies: [() throws -> Void]) throws -> [Sample] {
        try measureInterleaved(plan, bodies.map { Timed($0) })
    }

    /// The same, for operations with an untimed set-up before each run (one operation per run).
    static func measureInterleaved(_ plan: Plan, _ operations: [Timed]) throws -> [Sample] {
        var iterations: [Int] = []
        for operation in operations {
            iterations.append(operation.setup == nil ? try calibrate(plan, operation.body) : 1)
        }
        func run(_ index: Int) throws -> Double {
            try operations[index].setup?()
            return try batch(iterations[index], operations[index].body)
        }
        for _ in 0..<plan.warmup {
            for index in operations.indices { _ = try run(index) }
        }
        var times = Array(repeating: [Double](), count: operations.count)
        for round in 0..<plan.runs {
            // A B, then B A: whatever the order does (a cache, a journal commit) falls on both.
            let order = round % 2 == 0 ? Array(operations.indices) : operations.indices.reversed()
            for index in order { times[index].append(try run(index)) }
        }
        return zip(times, iterations).map { Sample(perOpNanos: $0, iterations: $1) }
    }
}

/// An operation to time, with an optional untimed set-up before each run.
struct Timed {
    let setup: (() throws -> Void)?
    let body: () throws -> Void

    init(setup: (() throws -> Void)? = nil, _ body: @escaping () throws -> Void) {
        self.setup = setup
        self.body = body
    }
}

/// Keeps a value alive and opaque to the optimiser, so that the work producing it is not removed.
@inline(never)
@_optimize(none)
func blackHole<T>(_ value: T) {}
