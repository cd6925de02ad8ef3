#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A progress line for a long operation (`done/total label (percent%)`), rewritten in place on
/// stderr when stderr is a terminal, and nothing at all otherwise (a script or a log gets the
/// result only). Redrawn at most once per `minimumInterval` (a quarter of a second), so that
/// ten thousand fast steps do not flood a slow terminal, and always for the last step.
package final class TerminalProgress: Sendable {
    /// The shortest time between two redraws (the first and the last step are always drawn).
    package static let minimumInterval = Duration.milliseconds(250)

    private let label: String
    private let enabled: Bool
    private let now: @Sendable () -> ContinuousClock.Instant
    private let output: @Sendable (Data) -> Void
    private let sharesTheTerminalWithStdout: Bool
    /// When the line was last drawn (nil: not yet), and the line on the screen (nil: none).
    private let state = Mutex<(drawnAt: ContinuousClock.Instant?, line: String?)>((nil, nil))

    /// A progress line for `label` ("credentials re-sealed"); `enabled` defaults to whether
    /// stderr is a terminal.
    package convenience init(_ label: String, enabled: Bool = isatty(2) == 1) {
        self.init(
            label, enabled: enabled, sharesTheTerminalWithStdout: isatty(1) == 1, now: { ContinuousClock.now },
            output: { StandardOutput.writeError($0) })
    }

    /// A progress line reading the time from `now` and writing to `output` (tests give a clock
    /// they advance themselves and collect what is written); `sharesTheTerminalWithStdout`:
    /// stdout is the same terminal, so `printAbove` moves the line out of its way.
    package init(
        _ label: String, enabled: Bool, sharesTheTerminalWithStdout: Bool,
        now: @escaping @Sendable () -> ContinuousClock.Instant, output: @escaping @Sendable (Data) -> Void
    ) {
        self.label = label
        self.enabled = enabled
        self.sharesTheTerminalWithStdout = sharesTheTerminalWithStdout
        self.now = now
        self.output = output
    }

    /// Shows `done` of `total`.
    package func update(_ done: Int, of total: Int) {
        guard enabled, total > 0, done >= 0 else { return }
        let time = now()
        let percent = Int((Double(min(done, total)) * 100 / Double(total)).rounded(.down))
        let line = "\(done)/\(total) \(label) (\(percent)%)"
        let redraw = state.withLock { state in
            if let drawnAt = state.drawnAt, time - drawnAt < Self.minimumInterval, done < total { return false }
            state = (time, line)
            return true
        }
        if redraw { output(Data("\r\u{1B}[K\(line)".utf8)) }
    }

    /// Runs `print` (which writes lines on stdout) with the progress line cleared before and
    /// drawn again after, when both are on the same terminal: the lines scroll above it
    /// instead of being written into it.
    package func printAbove(_ print: () throws -> Void) rethrows {
        guard sharesTheTerminalWithStdout, let line = state.withLock({ $0.line }) else { return try print() }
        output(Data("\r\u{1B}[K".utf8))
        defer { output(Data("\r\u{1B}[K\(line)".utf8)) }
        try print()
    }

    /// Clears the line (before the operation's result is printed).
    package func finish() {
        let onScreen = state.withLock { state in
            defer { state.line = nil }
            return state.line != nil
        }
        if onScreen { output(Data("\r\u{1B}[K".utf8)) }
    }
}
