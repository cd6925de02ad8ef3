#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A progress line for a long operation (`done/total label`), rewritten in place on stderr when
/// stderr is a terminal, and nothing at all otherwise (a script or a log gets the result only).
/// Redrawn at most once per percent.
public final class TerminalProgress: Sendable {
    private let label: String
    private let enabled: Bool
    /// The percent last drawn (-1: none yet), and whether a line is on the screen.
    private let state = Mutex<(shown: Int, drawn: Bool)>((-1, false))

    /// A progress line for `label` ("credentials re-sealed"); `enabled` defaults to whether
    /// stderr is a terminal.
    public init(_ label: String, enabled: Bool = isatty(2) == 1) {
        self.label = label
        self.enabled = enabled
    }

    /// Shows `done` of `total`.
    public func update(_ done: Int, of total: Int) {
        guard enabled, total > 0, done >= 0 else { return }
        let percent = Int((Double(min(done, total)) * 100 / Double(total)).rounded(.down))
        let redraw = state.withLock { state in
            guard percent != state.shown || done == total else { return false }
            state = (percent, true)
            return true
        }
        if redraw { StandardOutput.writeError(Data("\r\u{1B}[K\(done)/\(total) \(label) (\(percent)%)".utf8)) }
    }

    /// Clears the line (before the operation's result is printed).
    public func finish() {
        let drawn = state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { StandardOutput.writeError(Data("\r\u{1B}[K".utf8)) }
    }
}
