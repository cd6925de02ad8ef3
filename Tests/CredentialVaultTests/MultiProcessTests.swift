import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Several processes writing one vault.
@Suite(.ownThread) final class MultiProcessTests {
    let dir = TempDirectory()

    /// A helper process saving `count` credentials `prefix-0...` to the vault.
    private func storeMany(_ url: URL, keyFile: URL, prefix: String, count: Int) throws -> LiveChild {
        try LiveChild(
            BuiltProducts.helper, ["store-many", url.path, keyFile.path, prefix, "\(count)"],
            environment: ["CREDVAULT_TEST_HOST_SECRET": dir.path("this-machine/host-secret").path].merging(Sanitizers.options) { $1 })
    }

    @Test func twoProcessesStoring200EachEndWithAll400() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let writers = try ["left", "right"].map { try storeMany(store.url, keyFile: keyFile, prefix: $0, count: 200) }
        for writer in writers {
            // (A ceiling for a hang: the helper is killed past it.)
            #expect(LiveChild.exitCode(writer.wait(within: 600)) == 0)
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
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let reader = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        let writers = try ["left", "right"].map { try storeMany(store.url, keyFile: keyFile, prefix: $0, count: 400) }
        var seen = 0, reads = 0
        while writers.contains(where: \.isRunning) || reads == 0 {
            let keys = try reader.listKeys(service: "stress")
            #expect(keys.count >= seen, "a read went back from \(seen) to \(keys.count) credentials")
            seen = keys.count
            if let key = keys.last { #expect(try reader.load(key) != nil) }
            reads += 1
        }
        for writer in writers {
            // (A ceiling for a hang: the helper is killed past it.)
            #expect(LiveChild.exitCode(writer.wait(within: 600)) == 0)
        }
        #expect(try reader.listKeys(service: "stress").count == 800)
        print("lock-free reader: \(reads) reads while 800 saves were made")
    }
}
