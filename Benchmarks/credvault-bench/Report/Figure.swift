/// One measured figure: what was measured, at which size or item count, its timings, and its
/// ratio to the floor or raw counterpart measured in the same run, with the targets it is held to.
struct Figure {
    /// The measurement group (a section of the table).
    let group: String
    /// The JSON name, for example `seal`, `file_save`, `unlock_moderate`.
    let name: String
    var sizeBytes: Int?
    var items: Int?
    let sample: Sample
    /// `median / median of ratioTo`.
    var ratio: Double?
    /// The name of the figure `ratio` is relative to.
    var ratioTo: String?
    /// Report throughput (`size_bytes` per operation) as MB/s.
    var showsThroughput = false
    /// Further fields, in order (for example `derivations_per_unlock`).
    var extra: [JSONField] = []
    var checks: [Check] = []

    init(group: String, name: String, sizeBytes: Int? = nil, items: Int? = nil, sample: Sample) {
        self.group = group
        self.name = name
        self.sizeBytes = sizeBytes
        self.items = items
        self.sample = sample
    }

    /// Sets `ratio` to this figure's median over `other`'s.
    mutating func relate(to other: Figure) {
        ratio = sample.median / other.sample.median
        ratioTo = other.name
    }

    /// Megabytes (10^6 bytes) per second at the median.
    var megabytesPerSecond: Double? {
        guard showsThroughput, let size = sizeBytes else { return nil }
        return Double(size) / sample.median * 1e3
    }
}

/// A target the project set, checked against a measured value.
struct Check {
    enum Kind {
        case atMost
        case exactly
    }

    /// What is checked, for example `ratio to raw_seal` or `median vs 1 item`.
    let what: String
    let value: Double
    let limit: Double
    let kind: Kind
    /// How values print: `x` for ratios, `ns` for times, empty for counts.
    let unit: String

    static func atMost(_ what: String, _ value: Double, _ limit: Double, unit: String = "x") -> Check {
        Check(what: what, value: value, limit: limit, kind: .atMost, unit: unit)
    }

    static func exactly(_ what: String, _ value: Double, _ expected: Double) -> Check {
        Check(what: what, value: value, limit: expected, kind: .exactly, unit: "")
    }

    var met: Bool {
        switch kind {
        case .atMost: value <= limit
        case .exactly: abs(value - limit) < 1e-9
        }
    }

    /// For a missed upper bound: how many times over the limit.
    var overBy: Double? { met || kind != .atMost ? nil : value / limit }
}
