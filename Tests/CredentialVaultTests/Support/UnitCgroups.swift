import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Cgroups named like systemd units, for tests of what a process's cgroup says about it: a
/// slice of the test's own (`cv-test-RANDOM.slice`) in the cgroup v2 hierarchy, so that tests
/// running at the same time never share one. Needs root (or a delegated hierarchy).
final class UnitCgroups {
    /// The writable cgroup v2 hierarchy: `/sys/fs/cgroup` (unified), or `/sys/fs/cgroup/unified`
    /// (hybrid); `nil` when there is none this process may write.
    static let root: String? = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].first { path in
        access(path + "/cgroup.controllers", F_OK) == 0 && access(path, W_OK) == 0
    }

    /// A cgroup that could not be made (`errno`).
    struct Failure: Error {
        let code: Int32
    }

    let slice: String
    private var made: [String] = []

    init() throws {
        guard let root = Self.root else { throw Failure(code: ENOTSUP) }
        slice = root + "/cv-test-\(UInt64.random(in: 0...UInt64.max)).slice"
        guard mkdir(slice, 0o755) == 0 else { throw Failure(code: errno) }
    }

    /// Makes `path` (one or more `/`-separated cgroup names) under the slice; its directory.
    func make(_ path: String) throws -> String {
        var directory = slice
        for name in path.split(separator: "/") {
            directory += "/" + name
            if mkdir(directory, 0o755) == 0 {
                made.append(directory)
            } else if errno != EEXIST {
                throw Failure(code: errno)
            }
        }
        return directory
    }

    /// Removes the cgroups, deepest first (their processes have exited).
    func remove() {
        for directory in made.reversed() { rmdir(directory) }
        rmdir(slice)
    }
}
