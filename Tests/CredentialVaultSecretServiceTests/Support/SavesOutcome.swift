import Foundation

/// What one `async-saves` probe step reports (see Tests/SecretServiceProbe/SavesRun.swift):
/// outcomes only, no times.
struct SavesOutcome: CustomStringConvertible {
    /// Saves started before the heartbeat was asked for its beats.
    var started: Int
    /// Whether the heartbeat beat `SavesRun.beats` times once every save had started.
    var beat: Bool
    /// Saves that had not ended when those beats were counted (waiting, for a stopped daemon or
    /// a held lock).
    var unfinished: Int
    var ok: Int
    var cancelled: Int
    var other: Int
    var step: ProbeStep

    /// Parses `step`'s outcome; `nil` when it is not an `async-saves` result.
    init?(_ step: ProbeStep) {
        var fields: [String: String] = [:]
        for field in step.outcome.split(separator: ",") {
            let pair = field.split(separator: "=")
            guard pair.count == 2 else { return nil }
            fields[String(pair[0])] = String(pair[1])
        }
        guard let started = fields["started"].flatMap({ Int($0) }), let beat = fields["beat"],
            let unfinished = fields["unfinished"].flatMap({ Int($0) }), let ok = fields["ok"].flatMap({ Int($0) }),
            let cancelled = fields["cancelled"].flatMap({ Int($0) }), let other = fields["other"].flatMap({ Int($0) })
        else { return nil }
        self.started = started
        self.beat = beat == "yes"
        self.unfinished = unfinished
        self.ok = ok
        self.cancelled = cancelled
        self.other = other
        self.step = step
    }

    var description: String { "\(step.step): \(step.outcome)" + (step.detail.map { " (\($0))" } ?? "") }
}
