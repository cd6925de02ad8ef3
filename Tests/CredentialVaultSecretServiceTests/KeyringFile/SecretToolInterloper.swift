import Foundation
import Synchronization

/// Runs `secret-tool store` once, synchronously, from inside a write of the store under test
/// (its hook between read and rename): another program's write landing at the worst moment.
final class SecretToolInterloper: Sendable {
    let file: SecretToolFile
    let attributes: [String: String]
    private let count = Mutex(0)

    init(file: SecretToolFile, attributes: [String: String]) {
        self.file = file
        self.attributes = attributes
    }

    /// How many times it was called (it stores on the first call only).
    var calls: Int { count.withLock { $0 } }

    /// Stores "theirs" the first time it is called (blocking until secret-tool exits, at most a minute).
    func storeOnce() {
        guard count.withLock({ value in
            defer { value += 1 }
            return value == 0
        }) else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/secret-tool")
        process.arguments = ["store", "--label=theirs"] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
        process.environment = [
            "PATH": "/usr/bin:/bin", "SECRET_BACKEND": "file", "SECRET_FILE_TEST_PATH": file.path, "SECRET_FILE_TEST_PASSWORD": file.password,
        ]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        input.fileHandleForWriting.write(Data("theirs".utf8))
        try? input.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
    }
}
