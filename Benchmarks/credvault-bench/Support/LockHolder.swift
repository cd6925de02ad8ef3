import Foundation

/// Another process holding a file's `flock` (util-linux `flock`, running `cat` until its stdin
/// closes): the sealed file's lock as a concurrent writer would hold it.
final class LockHolder {
    private let process = Process()
    private let input = Pipe()

    /// Takes the lock on `path` in a new process; returns once it holds it.
    init(_ path: String) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/flock") else { throw BenchError("/usr/bin/flock is missing (util-linux)") }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        process.arguments = [path, "-c", "echo locked; exec cat >/dev/null"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = Data()
        while !seen.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchError("flock \(path) ended without taking the lock") }
            seen.append(chunk)
        }
    }

    /// Releases the lock (the holder's stdin ends) and waits for the process.
    func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
