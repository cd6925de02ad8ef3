import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// The golden fixtures of format 1.0 that need no keyring and no TPM (`GoldenFixtures`; the
/// keyring and TPM custody ones are opened by their own suites): each unlock method, a rollback
/// counter kept in files, and the three states a crash of a save leaves.
@Suite(.ownThread) final class GoldenFixtureTests {
    let dir = TempDirectory()

    /// Each unlock method under the host-secret file custody, no counter: the vault opens on
    /// the machine that wrote it and reads exactly what was written; on another machine the
    /// device-only record is refused (a device-key vault does not even unlock).
    @Test(arguments: ["passphrase.cvault", "keyfile.cvault", "device.cvault"])
    func eachUnlockMethodOpensAndReadsExactly(name: String) throws {
        let (folder, device) = try GoldenFixtures.privateCopy(in: dir)
        let url = folder.appendingPathComponent(name)
        let key = GoldenFixtures.key(name, in: folder)
        let store = try SealedFileStore.open(at: url, secret: key, configuration: SealedFileConfiguration(device: device))
        try GoldenFixtures.expectExactContents(store)
        #expect(store.custody == .file && !store.hasRollbackCounter)
        let elsewhere = SealedFileConfiguration(device: TestVault.device(in: dir, name: "other"))
        guard name != "device.cvault" else {
            #expect(throws: CredentialVaultError.deviceMismatch) { try SealedFileStore.open(at: url, secret: key, configuration: elsewhere) }
            return
        }
        let other = try SealedFileStore.open(at: url, secret: key, configuration: elsewhere)
        #expect(try other.load(GoldenFixtures.expected[0].0) == GoldenFixtures.expected[0].1)
        #expect(throws: CredentialVaultError.deviceMismatch) { try other.load(GoldenFixtures.expected[1].0) }
    }

    /// A vault with a rollback counter under the file custodian: its counter file
    /// (`counters/<vault id>.<reference>`, 8 bytes little-endian) holds the newest commit
    /// record's value, and the `.protected` mark is there. It opens with them; a save moves the
    /// counter on; without the counter file, or on another machine, it is refused.
    @Test func aVaultWithARollbackCounterOpensWithItsCounterFile() throws {
        let (folder, device) = try GoldenFixtures.privateCopy(in: dir)
        let url = folder.appendingPathComponent("counter.cvault")
        let bytes = try TestVault.bytes(url)
        let vaultID = Array(bytes[VaultHeader.Offset.vaultID..<VaultHeader.Offset.vaultID + VaultHeader.idSize])
        let (reference, value) = GoldenFixtures.newestCounter(bytes)
        let counters = folder.appendingPathComponent("counters")
        let hexID = vaultID.map { String(format: "%02x", $0) }.joined()
        let counterFile = counters.appendingPathComponent(hexID + "." + String(format: "%08x", reference))
        #expect(GoldenFixtures.integer(try TestVault.bytes(counterFile), at: 0, 8) == value)
        #expect(FileManager.default.fileExists(atPath: counters.appendingPathComponent(hexID + ".protected").path))

        let key = GoldenFixtures.key("counter.cvault", in: folder)
        let store = try SealedFileStore.open(at: url, secret: key, configuration: SealedFileConfiguration(device: device))
        try GoldenFixtures.expectExactContents(store)
        #expect(store.custody == .file && store.hasRollbackCounter)
        try store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "x"), options: .portable)
        #expect(GoldenFixtures.integer(try TestVault.bytes(counterFile), at: 0, 8) == value + 1)

        let saved = try TestVault.bytes(counterFile)
        try FileManager.default.removeItem(at: counterFile)
        expectThrows(\CredentialVaultError.isRolledBack) {
            try SealedFileStore.open(at: url, secret: key, configuration: SealedFileConfiguration(device: device))
        }
        try TestVault.write(saved, to: counterFile)
        expectThrows(\CredentialVaultError.isRolledBack) {
            try SealedFileStore.open(at: url, secret: key, configuration: SealedFileConfiguration(device: TestVault.device(in: self.dir, name: "other")))
        }
    }

    /// The three states a crash of a save can leave, as the writer left them: the entry
    /// appended whole but not committed (residue: ignored), the entry cut short (a crash in the
    /// middle of the append: ignored), and the entry whole with its commit record torn (a crash
    /// in the middle of the commit: the entry was durable, so it is rolled forward). Each opens
    /// as the last complete commit, and the next save goes on from there.
    @Test(arguments: [("residue.cvault", false), ("interrupted-append.cvault", false), ("torn-commit.cvault", true)])
    func aCrashedSaveReadsAsTheLastCompleteCommit(name: String, rolledForward: Bool) throws {
        let (folder, device) = try GoldenFixtures.privateCopy(in: dir)
        let url = folder.appendingPathComponent(name)
        let key = GoldenFixtures.key(name, in: folder)
        let configuration = SealedFileConfiguration(device: device)
        let store = try SealedFileStore.open(at: url, secret: key, configuration: configuration)
        let (extra, value) = GoldenFixtures.interrupted
        #expect(try store.load(extra) == (rolledForward ? value : nil))
        for (credential, value, _) in GoldenFixtures.expected { #expect(try store.load(credential) == value) }
        #expect(try store.listKeys().count == GoldenFixtures.expected.count + (rolledForward ? 1 : 0))
        let after = CredentialKey(service: "s", account: "after the crash")
        try store.save(Data("next".utf8), for: after, options: .portable)
        let reopened = try SealedFileStore.open(at: url, secret: key, configuration: configuration)
        #expect(try reopened.load(after) == Data("next".utf8))
        #expect(try reopened.load(extra) == (rolledForward ? value : nil))
    }

    @Test(.enabled(if: GoldenFixtures.writing))
    func writeFixtures() throws {
        let folder = try GoldenFixtures.folderForWriting()
        for name in ["passphrase.cvault", "keyfile.cvault", "device.cvault"] {
            let clock = ManualClock(start: GoldenFixtures.writingStart)
            _ = try GoldenFixtures.write(name, configuration: GoldenFixtures.configuration(in: folder, clock: clock), clock: clock)
        }
        let clock = ManualClock(start: GoldenFixtures.writingStart)
        var withCounter = GoldenFixtures.configuration(in: folder, clock: clock)
        withCounter.rollbackCounter = true
        _ = try GoldenFixtures.write("counter.cvault", configuration: withCounter, clock: clock)
        try writeCrashedSaves(in: folder)
        try GoldenFixtures.tidyAfterWriting()
    }

    /// The crash fixtures, each from a vault written as the others plus one more save, with
    /// the bytes that save wrote put back as a crash would leave them.
    private func writeCrashedSaves(in folder: URL) throws {
        for name in ["residue.cvault", "interrupted-append.cvault", "torn-commit.cvault"] {
            let clock = ManualClock(start: GoldenFixtures.writingStart)
            guard let store = try GoldenFixtures.write(name, configuration: GoldenFixtures.configuration(in: folder, clock: clock), clock: clock)
            else { continue }
            let committed = try TestVault.bytes(store.url)
            clock.advance(by: .seconds(1))
            try store.save(GoldenFixtures.interrupted.1, for: GoldenFixtures.interrupted.0, options: .portable)
            let saved = try TestVault.bytes(store.url)
            // An append: the bytes before the commit records and the committed ones stay.
            try #require(saved.count > committed.count && saved[..<CommitRecord.offsets[0]] == committed[..<CommitRecord.offsets[0]])
            let entry = saved[committed.count...]
            let slot = try #require(CommitRecord.offsets.firstIndex { saved[$0..<$0 + CommitRecord.size] != committed[$0..<$0 + CommitRecord.size] })
            let crashed: [UInt8]
            switch name {
            case "residue.cvault":  // the entry durable, its commit never written
                crashed = committed + entry
            case "interrupted-append.cvault":  // the entry cut in the middle
                crashed = committed + entry.prefix(entry.count / 2)
            default:  // the commit record half written: its second half still the older one's
                var torn = saved
                let half = CommitRecord.offsets[slot] + CommitRecord.size / 2
                torn.replaceSubrange(half..<CommitRecord.offsets[slot] + CommitRecord.size, with: committed[half..<CommitRecord.offsets[slot] + CommitRecord.size])
                crashed = torn
            }
            try TestVault.write(crashed, to: store.url)
        }
    }
}
