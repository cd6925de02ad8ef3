import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Rollback detection with the host-secret file custodian: the custody suite, and
/// what only the file custodian does (its counter file, opt-in, formats).
@Suite(.ownThread) final class RollbackTests {
    let dir = TempDirectory()

    private func setup() -> CustodySuite.Setup {
        var configuration = TestVault.configuration(dir)
        configuration.rollbackCounter = true
        mkdir(dir.path("vaults").path, 0o700)
        return CustodySuite.Setup(configuration: configuration, directory: dir.path("vaults"), secret: .passphrase(TestVault.passphrase))
    }

    @Test(arguments: CustodySuite.Check.allCases)
    func custodySuite(_ check: CustodySuite.Check) throws { try CustodySuite.run(check, on: setup()) }

    /// Without asking, a file-custody vault has no counter (portable: a copy opens on another
    /// machine); asking makes one.
    @Test func theFileCounterIsOptIn() throws {
        let plain = try TestVault.create(dir)
        #expect(plain.formatVersion == "1.0")
        #expect(!plain.hasRollbackCounter)
        #expect(plain.custody == .file)
    }

    /// The counter lives beside the host secret; removing it refuses the vault until a
    /// restore is accepted (then a new counter is made).
    @Test func aMissingCounterIsRefusedUntilAccepted() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        let counters = TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent().appendingPathComponent("counters")
        let all = try FileManager.default.contentsOfDirectory(atPath: counters.path)
        let names = all.filter { !$0.hasSuffix(".protected") }
        #expect(names.count == 1 && all.count == 2, "the counter and the vault's protection mark: \(all)")
        try FileManager.default.removeItem(at: counters.appendingPathComponent(names[0]))
        do {
            _ = try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration)
            Issue.record("a vault whose counter is missing opened")
        } catch {
            guard case .rolledBack(let why) = error else { throw error }
            #expect(why.contains("missing"))
        }
        let accepted = try SealedFileStore.acceptRestore(at: store.url, secret: s.secret, configuration: s.configuration)
        #expect(try accepted.load(CredentialKey(service: "custody", account: "portable")) == Data("portable".utf8))
        #expect(try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration).hasRollbackCounter)
    }

    /// An open reads the file, derives the key (seconds with a passphrase), then asks the
    /// counter: another process's save in between moved the counter past the file this open
    /// read. That is no rollback: the open reads the file again and opens the newer state.
    @Test func anOpenThatReadTheFileBeforeAnotherProcessSavedOpensTheNewerState() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        let key = CredentialKey(service: "custody", account: "concurrent save")
        let readBeforeTheSave = try LockedVault(url: store.url)
        try store.save(Data("saved meanwhile".utf8), for: key, options: .default)
        let opened = try readBeforeTheSave.unlock(with: s.secret, configuration: s.configuration)
        #expect(try opened.load(key) == Data("saved meanwhile".utf8))
    }

    /// A crash between the durable write and the counter's increment leaves the file one ahead:
    /// accepted, and the next write completes the increment (never two ahead).
    @Test func aFileOneAheadIsAcceptedAndCaughtUp() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        let counters = TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent().appendingPathComponent("counters")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: counters.path).first { !$0.hasSuffix(".protected") })
        let counterFile = counters.appendingPathComponent(name)
        let before = try Data(contentsOf: counterFile)
        try store.save(Data("a".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        // Put the counter back one step: as if the increment had not happened.
        try CustodySuite.writeInPlaceForTests(before, to: counterFile)
        let reopened = try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration)
        try reopened.save(Data("b".utf8), for: CredentialKey(service: "s", account: "b"), options: .portable)
        let value = try Data(contentsOf: counterFile).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        let old = before.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        #expect(value == old + 2)
        #expect(try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration).load(CredentialKey(service: "s", account: "b")) != nil)
    }

    /// A counter file holds exactly 8 bytes; any other size is the counter's damage (`io`,
    /// naming the counter file), never reported as damaged vault data (`corrupted`, whose
    /// advice is to restore the vault from a backup), however large the file is.
    @Test func aCounterFileOfAnotherSizeIsReportedAsADamagedCounter() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        let counters = TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent().appendingPathComponent("counters")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: counters.path).first { !$0.hasSuffix(".protected") })
        let counterFile = counters.appendingPathComponent(name)
        let intact = try Data(contentsOf: counterFile)
        for size in [0, 7, 9, 64, 65, 1 << 20] {
            try CustodySuite.writeInPlaceForTests(Data(repeating: 1, count: size), to: counterFile)
            do {
                _ = try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration)
                Issue.record("a counter file of \(size) bytes was read")
            } catch {
                guard case .io(let why) = error else {
                    Issue.record("a counter file of \(size) bytes: \(error)")
                    continue
                }
                #expect(why.contains("damaged") && why.contains(name), "\(why)")
            }
        }
        try CustodySuite.writeInPlaceForTests(intact, to: counterFile)
        #expect(try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration).hasRollbackCounter)
    }

    /// Every counter has a nonzero reference, and a counter file's name always carries it. A
    /// vault with a counter whose commit records name reference 0 (only a faulty writer with
    /// the key makes one) is `corrupted`: it is not checked against a file named by the vault
    /// id alone, as counters were named before they had references.
    @Test func aCounterReferenceOfZeroIsCorrupted() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        let counters = TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent().appendingPathComponent("counters")
        var vaultID: [UInt8] = []
        var written = RollbackStamp()
        // The whole file written again with reference 0 in its commit records (the counter
        // cannot then be advanced: the write is durable and reported as failed).
        do {
            try store.mutate { (state) throws(CredentialVaultError) in
                vaultID = state.contents.header.vaultID
                state.contents.journal.counter.reference = 0
                state.rewriteRequested = true
            }
        } catch {
            guard case .io = error else { throw error }
        }
        try TestVault.bytes(store.url).withUnsafeBytes { raw in
            written = try #require(CommitRecord.decodeBoth(raw, macKey: store.state.withLock { $0.keys.macKey })[0]).counter
        }
        #expect(written.reference == 0)
        // A counter file under the name a reference of 0 would give, agreeing with the file.
        let value = withUnsafeBytes(of: written.value.littleEndian) { Data($0) }
        let bare = counters.appendingPathComponent(HostFileCustodian.name(vaultID))
        #expect(FileManager.default.createFile(atPath: bare.path, contents: value, attributes: [.posixPermissions: 0o600]))
        do {
            _ = try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration)
            Issue.record("a vault whose counter reference is 0 opened")
        } catch {
            guard case .corrupted(let why) = error else { throw error }
            #expect(why.contains("reference"), "\(why)")
        }
    }

    /// The custody and flags bytes are authenticated (the data-key wrap's associated data): an
    /// edit naming a weaker custodian or dropping the counter does not open; unknown values are
    /// refused before any key is derived.
    @Test func theCustodyBytesCannotBeEditedOrInvented() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        let bytes = try Data(contentsOf: store.url)
        func opening(_ edit: (inout Data) -> Void) -> CredentialVaultError? {
            var edited = bytes
            edit(&edited)
            do {
                try CustodySuite.writeInPlaceForTests(edited, to: store.url)
                _ = try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration)
                return nil
            } catch let error as CredentialVaultError {
                return error
            } catch {
                return .io("\(error)")
            }
        }
        let flags = VaultHeader.Offset.flags, custody = VaultHeader.Offset.custody
        #expect(opening { $0[flags] = 0 } == .wrongPassphrase, "dropping the counter flag breaks the key wrap")
        #expect(opening { $0[custody] = 1 } == .wrongPassphrase, "naming another custodian breaks the key wrap")
        if case .unsupported = opening({ $0[custody] = 7 }) {} else { Issue.record("an unknown custodian is unsupported") }
        if case .corrupted = opening({ $0[flags] = 3 }) {} else { Issue.record("unknown flags are corrupted") }
        try CustodySuite.writeInPlaceForTests(bytes, to: store.url)
        #expect(try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration).hasRollbackCounter)
    }

    /// A move without saying whether to keep a counter keeps the one the vault has (`credvault custody
    /// file` once dropped it silently).
    @Test func aMoveKeepsTheCounterUnlessTold() throws {
        let s = setup()
        let store = try CustodySuite.createsAndReopens(s)
        try store.changeCustody(to: .file, secret: s.secret)
        #expect(store.hasRollbackCounter, "kept")
        try store.changeCustody(to: .file, secret: s.secret, rollbackCounter: false)
        #expect(!store.hasRollbackCounter, "dropped only when asked")
        let reopened = try SealedFileStore.open(at: store.url, secret: s.secret, configuration: s.configuration)
        #expect(!reopened.hasRollbackCounter && reopened.formatVersion == "1.0")
    }
}
