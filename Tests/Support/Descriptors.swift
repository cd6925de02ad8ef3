import CTestSpawn

#if canImport(Glibc)
import Glibc
#endif

/// Descriptors for spawning children while other tests run in parallel in this process: a
/// descriptor this test opens must never reach another test's child (which would keep, for
/// example, a pipe's writer open and its reader waiting for an end that never comes).
package enum Descriptors {
    /// A pipe whose two ends are close-on-exec from birth (`pipe2(O_CLOEXEC)`): no spawn in
    /// another thread can inherit them between `pipe` and `fcntl`.
    package static func pipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard cts_pipe_cloexec(&fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// Makes the child of `actions` close every descriptor from `lowest` up before it runs, so
    /// that it gets only those the spawn set up (0, 1 and 2), whatever the process holds.
    package static func closeInChild(from lowest: Int32, _ actions: inout posix_spawn_file_actions_t) {
        _ = cts_spawn_close_from(&actions, lowest)
    }
}
