/// The timings of one measurement: the per-operation time of each run, in nanoseconds.
struct Sample: Sendable {
    /// Per-operation nanoseconds, one value per run, sorted ascending.
    let perOpNanos: [Double]
    /// Operations timed per run (a run is one batch; its time is divided by this).
    let iterations: Int

    init(perOpNanos: [Double], iterations: Int) {
        precondition(!perOpNanos.isEmpty, "a sample needs at least one run")
        self.perOpNanos = perOpNanos.sorted()
        self.iterations = iterations
    }

    var runs: Int { perOpNanos.count }
    var min: Double { perOpNanos.first! }
    var max: Double { perOpNanos.last! }

    /// The median run (the mean of the two middle runs for an even count).
    var median: Double {
        let n = perOpNanos.count
        return n % 2 == 1 ? perOpNanos[n / 2] : (perOpNanos[n / 2 - 1] + perOpNanos[n / 2]) / 2
    }
}

extension Duration {
    /// The duration in nanoseconds.
    var nanoseconds: Double {
        let parts = components
        return Double(parts.seconds) * 1e9 + Double(parts.attoseconds) / 1e9
    }
}
