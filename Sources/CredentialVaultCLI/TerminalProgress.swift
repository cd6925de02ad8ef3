#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A progress line for a long operation (`done/total label`), rewritten in place on stderr when
/// stderr is a terminal, and nothing at all otherwise (a script or a log gets the result only).
/// Redrawn at most once per percent.
public final class TerminalProgress: @unchecked Sendable {
    // @unchecked: used by the one thread that runs the operation.
    private let label: String
    private let enabled: Bool
    private var shown = -1
    private var drawn = false

    /// A progress line for `label` ("credentials re-sealed"); `enabled` defaults to whether
    /// stderr is a terminal.
    public init(_ label: String, enabled: Bool = isatty(2) == 1) {
        self.label = label
        self.enabled = enabled
    }

    /// Shows `done` of `total`.
    public func update(_ done: Int, of total: Int) {
        guard enabled, total > 0 else { return }
        let percent = done * 100 / total
        guard percent != shown || done == total else { return }
        shown = percent
        drawn = true
        StandardOutput.writeError(Data("\r\u{1B}[K\(done)/\(total) \(label) (\(percent)%)".utf8))
    }

    /// Clears the line (before the operation's result is printed).
    public func finish() {
        guard drawn else { return }
        StandardOutput.writeError(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
