/// How much to repeat a measurement: warm-up runs (discarded), timed runs, and the shortest
/// batch a run of a fast operation is grown to (so the clock's resolution does not matter).
struct Plan: Sendable {
    var warmup: Int
    var runs: Int
    var minBatch: Duration

    /// Fast operations (nanoseconds to a millisecond): many short batches, so that on a
    /// shared machine most batches run without being preempted and the median is the cost of
    /// the operation, not of the other processes.
    static func fast(_ options: Options) -> Plan {
        options.quick
            ? Plan(warmup: 2, runs: 15, minBatch: .microseconds(200))
            : Plan(warmup: 10, runs: 151, minBatch: .microseconds(300)).scaled(options)
    }

    /// Durable writes (about a millisecond each, noisy): one operation per run.
    static func durable(_ options: Options) -> Plan {
        options.quick ? Plan(warmup: 1, runs: 5, minBatch: .zero) : Plan(warmup: 5, runs: 61, minBatch: .zero).scaled(options)
    }

    /// Whole processes (several milliseconds each): one per run.
    static func process(_ options: Options) -> Plan {
        options.quick ? Plan(warmup: 1, runs: 5, minBatch: .zero) : Plan(warmup: 5, runs: 41, minBatch: .zero).scaled(options)
    }

    /// Key derivations (tens to hundreds of milliseconds each).
    static func slow(_ options: Options, runs: Int) -> Plan {
        options.quick ? Plan(warmup: 0, runs: 1, minBatch: .zero) : Plan(warmup: 1, runs: runs, minBatch: .zero).scaled(options)
    }

    /// `--runs-factor X` multiplies the runs of a full plan.
    private func scaled(_ options: Options) -> Plan {
        guard let factor = options.runsFactor else { return self }
        var plan = self
        plan.runs = max(1, Int((Double(runs) * factor).rounded()))
        return plan
    }
}
