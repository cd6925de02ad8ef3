import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// A vault's directory is opened and checked once, and every later file operation goes through
/// that descriptor: a directory renamed away and replaced by an impostor
/// holding a copy of the vault never receives the write, and the vault in use gets it; the
/// write then throws `io`, saying that the directory is no longer at its path.
@Suite(.ownThread) final class DirectorySwapTests {
    let dir = TempDirectory()

    enum Write: String, CaseIterable {
        case changeSecret, rotate, save, compaction
    }

    @Test(arguments: Write.allCases)
    func aSwappedDirectoryNeverReceivesTheWrite(write: Write) throws {
        let store = try TestVault.create(dir)
        let key = CredentialKey(service: "s", account: "a")
        try store.save(Data("before".utf8), for: key, options: .portable)
        let original = store.url.deletingLastPathComponent()
        let movedAway = dir.path("moved-away")
        // The swap: the directory renamed away, an impostor with a copy of the vault in its place.
        #expect(rename(original.path, movedAway.path) == 0)
        #expect(mkdir(original.path, 0o700) == 0)
        let copy = try TestVault.bytes(movedAway.appendingPathComponent(store.url.lastPathComponent))
        try TestVault.write(copy, to: store.url)

        // Every write lands in the directory in use, and says that it is no longer at its path
        // (passwd exited 0 while the vault at the path kept the old passphrase).
        func expectMovedError(_ body: () throws -> Void) {
            let error = #expect(throws: CredentialVaultError.self) { try body() }
            guard case .io(let message)? = error else {
                Issue.record("expected io, got \(String(describing: error))")
                return
            }
            #expect(message.contains("no longer at \(original.path)"), "\(message)")
        }
        var passphrase = TestVault.passphrase
        switch write {
        case .changeSecret:
            expectMovedError { try store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new passphrase"), kdf: TestVault.kdf) }
            passphrase = "new passphrase"
        case .rotate:
            expectMovedError { try store.rotateDataKey(secret: .passphrase(TestVault.passphrase)) }
        case .save:
            expectMovedError { try store.save(Data("after".utf8), for: key, options: .portable) }
        case .compaction:
            // Enough appends for the journal to outgrow its snapshot: a whole-file rewrite.
            let value = Data(repeating: 0x41, count: 8 << 10)
            for i in 0..<12 { expectMovedError { try store.save(value, for: CredentialKey(service: "big", account: "\(i)"), options: .portable) } }
        }
        #expect(try TestVault.bytes(store.url) == copy, "the impostor's copy is untouched")
        let entries = try FileManager.default.contentsOfDirectory(atPath: original.path)
        #expect(entries == [store.url.lastPathComponent], "no temp or lock file in the impostor: \(entries)")
        // The vault in use, wherever its directory went, has the write.
        let inUse = try SealedFileStore.open(
            at: movedAway.appendingPathComponent(store.url.lastPathComponent), secret: .passphrase(passphrase),
            configuration: TestVault.configuration(dir))
        if write == .save { #expect(try inUse.load(key) == Data("after".utf8)) }
        if write == .compaction { #expect(try inUse.listKeys(service: "big").count == 12) }
        #expect(try store.load(key) != nil)
    }
}

/// `create` in a directory moved away during the creation says so too.
@Suite(.ownThread) final class DirectoryMovedDuringCreateTests {
    let dir = TempDirectory()

    @Test func aCreateWhoseDirectoryMovedAwayThrows() throws {
        let original = dir.path("vault")
        #expect(mkdir(original.path, 0o700) == 0)
        let url = original.appendingPathComponent("v.cvault")
        let moved = dir.path("moved")
        // The directory moves while the creation derives its key (after it took the lock).
        var configuration = TestVault.configuration(dir)
        configuration.beforePassphraseDerivation = {
            guard access(moved.path, F_OK) != 0 else { return }
            rename(original.path, moved.path)
            mkdir(original.path, 0o700)
        }
        let error = #expect(throws: CredentialVaultError.self) {
            try SealedFileStore.create(at: url, secret: .passphrase("p"), kdf: TestVault.kdf, configuration: configuration)
        }
        guard case .io(let message)? = error else {
            Issue.record("expected io, got \(String(describing: error))")
            return
        }
        #expect(message.contains("no longer at \(original.path)"), "\(message)")
        #expect(FileManager.default.fileExists(atPath: dir.path("moved/v.cvault").path), "created where the directory went")
    }
}
