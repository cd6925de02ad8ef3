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
}
