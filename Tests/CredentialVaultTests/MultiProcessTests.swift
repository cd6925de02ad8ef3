import Foundation
import Testing

@testable import CredentialVault

/// Several processes writing one vault.
@Suite final class MultiProcessTests {
    let dir = TempDirectory()

    @Test func twoProcessesStoring200EachEndWithAll400() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, key: .keyFile(keyFile))
        let writers = try ["left", "right"].map { prefix in
            let process = Process()
            process.executableURL = BuiltProducts.helper
            process.arguments = ["store-many", store.url.path, keyFile.path, prefix, "200"]
            process.environment = ["CREDVAULT_TEST_HOST_SECRET": dir.path("this-machine/host-secret").path]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        let keys = try store.listKeys(service: "stress")
        #expect(keys.count == 400)
        for prefix in ["left", "right"] {
            for i in [0, 99, 199] {
                #expect(try store.load(CredentialKey(service: "stress", account: "\(prefix)-\(i)")) == Data("\(prefix)-value-\(i)".utf8))
            }
        }
    }

    /// Readers take no lock: while two processes append and commit (and the journal is
    /// compacted now and then), every read sees a whole committed state, never an error, and
    /// never fewer credentials than a read before it.
    @Test func aReaderWithoutTheLockOnlyEverSeesCommittedStates() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, key: .keyFile(keyFile))
        let reader = try SealedFileStore.open(at: store.url, key: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        let writers = try ["left", "right"].map { prefix in
            let process = Process()
            process.executableURL = BuiltProducts.helper
            process.arguments = ["store-many", store.url.path, keyFile.path, prefix, "400"]
            process.environment = ["CREDVAULT_TEST_HOST_SECRET": dir.path("this-machine/host-secret").path]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        var seen = 0, reads = 0
        while writers.contains(where: \.isRunning) || reads == 0 {
            let keys = try reader.listKeys(service: "stress")
            #expect(keys.count >= seen, "a read went back from \(seen) to \(keys.count) credentials")
            seen = keys.count
            if let key = keys.last { #expect(try reader.load(key) != nil) }
            reads += 1
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        #expect(try reader.listKeys(service: "stress").count == 800)
        print("lock-free reader: \(reads) reads while 800 saves were made")
    }
}
