#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `SIGPIPE` as the process found it. The executables ignore it (a failed write is an error to
/// report, not a death by signal), but a program they run in their place (`credvault exec`,
/// the hand-over to `credvault-full`) gets it back as it was inherited: only "ignored" or
/// "default" can be inherited across `execve`, and a program that expects to die quietly when
/// its reader goes away (`yes | head`) must still do so.
enum InheritedSignals {
    /// Whether `SIGPIPE` was ignored when this process started (by its parent's choice).
    private static let wasIgnored = Atomic<Bool>(false)

    /// Records how `SIGPIPE` was inherited, then ignores it.
    static func ignoreBrokenPipes() {
        var previous = sigaction()
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigemptyset(&ignore.sa_mask)
        guard sigaction(SIGPIPE, &ignore, &previous) == 0 else { return }
        let ignored = previous.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) } ?? false
        wasIgnored.store(ignored, ordering: .relaxed)
    }

    /// Puts `SIGPIPE` back as it was inherited (just before `execve`).
    static func restoreBrokenPipes() {
        var restored = sigaction()
        restored.__sigaction_handler.sa_handler = wasIgnored.load(ordering: .relaxed) ? SIG_IGN : SIG_DFL
        sigemptyset(&restored.sa_mask)
        _ = sigaction(SIGPIPE, &restored, nil)
    }
}
