import Foundation

/// The numbers of one `async-saves` probe step (see Tests/SecretServiceProbe/AsyncSteps.swift).
struct HeartbeatRun: CustomStringConvertible {
    /// The heartbeat's worst lateness while the saves ran (and were cancelled).
    var lag: Duration
    /// Its worst lateness before, with nothing else running: the machine's own noise.
    var baseline: Duration
    /// From the cancellation to the last save's answer (`nil`: not cancelled).
    var cancelLatency: Duration?
    var ok: Int
    var cancelled: Int
    var other: Int
    var step: ProbeStep

    /// Parses `step`'s outcome; `nil` when it is not an `async-saves` result.
    init?(_ step: ProbeStep) {
        var fields: [String: Int64] = [:]
        for field in step.outcome.split(separator: ",") {
            let pair = field.split(separator: "=")
            guard pair.count == 2, let number = Int64(pair[1]) else { return nil }
            fields[String(pair[0])] = number
        }
        guard let lag = fields["lagus"], let baseline = fields["baselineus"], let cancel = fields["cancelus"],
            let ok = fields["ok"], let cancelled = fields["cancelled"], let other = fields["other"]
        else { return nil }
        self.lag = .microseconds(lag)
        self.baseline = .microseconds(baseline)
        cancelLatency = cancel < 0 ? nil : .microseconds(cancel)
        self.ok = Int(ok)
        self.cancelled = Int(cancelled)
        self.other = Int(other)
        self.step = step
    }

    var description: String {
        "\(step.step): lag \(lag), baseline \(baseline), cancel \(cancelLatency.map { "\($0)" } ?? "-"), "
            + "ok \(ok), cancelled \(cancelled), other \(other)" + (step.detail.map { " (\($0))" } ?? "")
    }
}

/// The bounds of the issue's proof: the heartbeat's worst lag, and how fast cancelled saves return.
enum HeartbeatBounds {
    static let lag = Duration.milliseconds(20)
    static let cancel = Duration.milliseconds(50)
    /// Runs of a timing measurement before it counts as failed: the machine (2 cores) is shared
    /// with other builds, which delay any thread now and then, this design or not. Blocking
    /// the pool (the old synchronous path) misses the bounds by 10 to 1000 times, every run.
    static let attempts = 3
}
