import CredentialVaultCLI
import Foundation
import Synchronization
import Testing

/// The progress line of long commands (`fleet rotate`, `migrate`): counted steps of the total,
/// redrawn at most a few times a second on a clock the test moves, the last step always
/// drawn, cleared at the end, and nothing at all when disabled (stderr not a terminal).
struct TerminalProgressTests {
    /// A clock the test moves, and what the progress line wrote.
    final class Screen: Sendable {
        let time = Mutex(ContinuousClock.now)
        let written = Mutex<[String]>([])

        func progress(enabled: Bool = true, sharingStdout: Bool = false) -> TerminalProgress {
            TerminalProgress(
                "credentials moved", enabled: enabled, sharesTheTerminalWithStdout: sharingStdout,
                now: { self.time.withLock { $0 } },
                output: { data in self.written.withLock { $0.append(String(decoding: data, as: UTF8.self)) } })
        }

        func advance(_ duration: Duration) { time.withLock { $0 += duration } }
        var lines: [String] { written.withLock { $0 } }
    }

    @Test func fastStepsAreDrawnAtMostOncePerIntervalAndTheLastOneAlways() {
        let screen = Screen()
        let progress = screen.progress()
        for done in 0..<1000 { progress.update(done, of: 1000) }
        #expect(screen.lines == ["\r\u{1B}[K0/1000 credentials moved (0%)"], "only the first of steps within one interval")
        screen.advance(TerminalProgress.minimumInterval)
        progress.update(500, of: 1000)
        progress.update(999, of: 1000)
        progress.update(1000, of: 1000)
        #expect(screen.lines.dropFirst() == ["\r\u{1B}[K500/1000 credentials moved (50%)", "\r\u{1B}[K1000/1000 credentials moved (100%)"])
        progress.finish()
        #expect(screen.lines.last == "\r\u{1B}[K", "cleared at the end")
    }

    @Test func linesPrintedOnTheSameTerminalScrollAboveTheProgressLine() {
        let screen = Screen()
        let progress = screen.progress(sharingStdout: true)
        progress.update(1, of: 2)
        progress.printAbove { screen.written.withLock { $0.append("migrated\n") } }
        #expect(screen.lines == ["\r\u{1B}[K1/2 credentials moved (50%)", "\r\u{1B}[K", "migrated\n", "\r\u{1B}[K1/2 credentials moved (50%)"])
        let alone = Screen()
        let other = alone.progress(sharingStdout: false)
        other.update(1, of: 2)
        other.printAbove { alone.written.withLock { $0.append("migrated\n") } }
        #expect(alone.lines == ["\r\u{1B}[K1/2 credentials moved (50%)", "migrated\n"], "stdout elsewhere: left alone")
    }

    @Test func nothingIsWrittenWhenDisabled() {
        let screen = Screen()
        let progress = screen.progress(enabled: false)
        progress.update(0, of: 2)
        progress.update(2, of: 2)
        progress.finish()
        #expect(screen.lines.isEmpty)
    }
}
