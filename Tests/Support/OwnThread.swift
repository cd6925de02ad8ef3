import CredentialVaultTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs each test case of a suite (or a test) on a thread of its own instead of Swift's
/// cooperative pool. Tests block their thread all the time (a subprocess to wait for, a KDF, a
/// pipe to read); on a pool as wide as the machine's cores, two such tests in parallel stop
/// every other test's tasks, and the product's own deadlines (lock waits, D-Bus and HTTP
/// timeouts) then pass while nothing runs. Put on every suite, except those that measure the
/// pool itself: those must run on it, beside tests that leave it free.
package struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        TestProcess.setUp()
        guard testCase != nil else { return try await function() }
        let thread = PrivatePool(width: 1)
        defer { thread.shutdown() }
        try await withTaskExecutorPreference(thread) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test case runs on a thread of its own, not on Swift's cooperative pool.
    package static var ownThread: Self { OwnThread() }
}

/// What the test process sets once for all its tests.
package enum TestProcess {
    /// Ignores `SIGPIPE`: tests write to their children's stdin, and under load a child that
    /// refuses its arguments can exit before the write, which would then kill the whole test
    /// process. The tests' own spawners reset every signal to its default in the child
    /// (`POSIX_SPAWN_SETSIGDEF`), so the programs under test still start as from a shell.
    package static func setUp() { _ = once }

    private static let once: Void = { signal(SIGPIPE, SIG_IGN) }()
}
