import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVault

/// A save that fails on a full disk or a read-only file system leaves the vault exactly as it
/// was (on disk and in memory), leaves no temp file, and says what happened and that nothing
/// was changed. Needs to mount a tmpfs (root); skipped with a message otherwise.
@Suite(.enabled(if: ScratchFileSystem.available, "mounting a tmpfs is not permitted here (needs root or CAP_SYS_ADMIN)"))
final class FaultInjectionTests {
    let dir = TempDirectory()
    let before: [CredentialKey: Data] = [
        CredentialKey(service: "s", account: "one"): Data("first value".utf8),
        CredentialKey(service: "s", account: "two"): Data(repeating: 7, count: 300),
    ]

    /// A key-file vault holding `before`, on a fresh tmpfs of `size`.
    private func vaultOnScratch(size: String) throws -> (ScratchFileSystem, SealedFileStore, URL) {
        let fs = try ScratchFileSystem(at: dir.path("fs"), size: size)
        let keyFile = try TestVault.keyFile(dir)
        let store = try SealedFileStore.create(
            at: fs.url.appendingPathComponent("v.cvault"), secret: .keyFile(keyFile), kdf: TestVault.kdf,
            configuration: TestVault.configuration(dir))
        for (key, value) in before { try store.save(value, for: key, options: .portable) }
        return (fs, store, keyFile)
    }

    /// The vault as this handle sees it and as a fresh open sees it: both still `before`.
    private func expectUnchanged(_ store: SealedFileStore, keyFile: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try VaultDirectory.contents(of: store) == before, "this handle", sourceLocation: sourceLocation)
        let fresh = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        #expect(try VaultDirectory.contents(of: fresh) == before, "a fresh open", sourceLocation: sourceLocation)
        #expect(VaultDirectory.tempFiles(of: store.url).isEmpty, "no temp file left", sourceLocation: sourceLocation)
    }

    private func expectIOError(
        _ error: CredentialVaultError?, mentioning phrase: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .io(let message) = error else {
            Issue.record("expected an io error, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(message.contains(phrase) && message.contains("nothing was changed"), "\(message)", sourceLocation: sourceLocation)
    }

    private func failure(_ body: () throws -> Void) -> CredentialVaultError? {
        do {
            try body()
            return nil
        } catch let error as CredentialVaultError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    @Test func diskFullDuringSaveChangesNothingAndSaysSo() throws {
        let (fs, store, keyFile) = try vaultOnScratch(size: "256k")
        let sizeBefore = try TestVault.bytes(store.url).count
        let filler = fs.fill()
        let big = CredentialKey(service: "s", account: "big")
        let error = failure { try store.save(Data(repeating: 1, count: 8192), for: big, options: .portable) }
        expectIOError(error, mentioning: "disk is full")
        print("disk full: \(error.map { "\($0)" } ?? "no error")")
        try expectUnchanged(store, keyFile: keyFile)
        #expect(try TestVault.bytes(store.url).count == sizeBefore, "the partial journal entry was cut off again")
        // A rotation rewrites the whole file (a new file beside it, then a rename).
        expectIOError(failure { try store.rotateDataKey(secret: .keyFile(keyFile)) }, mentioning: "disk is full")
        try expectUnchanged(store, keyFile: keyFile)
        // Space again: the same handle carries on.
        try FileManager.default.removeItem(at: filler)
        try store.save(Data(repeating: 1, count: 8192), for: big, options: .portable)
        #expect(try store.load(big)?.count == 8192)
    }

    @Test func readOnlyFileSystemDuringSaveChangesNothingAndSaysSo() throws {
        let (fs, store, keyFile) = try vaultOnScratch(size: "1m")
        try fs.setReadOnly(true)
        let error = failure { try store.save(Data("new".utf8), for: CredentialKey(service: "s", account: "new"), options: .portable) }
        expectIOError(error, mentioning: "read-only")
        print("read-only: \(error.map { "\($0)" } ?? "no error")")
        expectIOError(failure { _ = try store.deleteAll() }, mentioning: "read-only")
        expectIOError(failure { try store.changeSecret(from: .keyFile(keyFile), to: .passphrase("p"), kdf: TestVault.kdf) }, mentioning: "read-only")
        try expectUnchanged(store, keyFile: keyFile)
        try fs.setReadOnly(false)
        try store.save(Data("new".utf8), for: CredentialKey(service: "s", account: "new"), options: .portable)
    }

    /// Root ignores directory permissions, so a user process (nobody) makes this save.
    @Test(.enabled(if: geteuid() == 0, "needs root to run the save as another user"))
    func readOnlyDirectoryStillTakesSavesAndRefusesRewrites() throws {
        let nobody: uid_t = 65534
        chmod(dir.url.path, 0o711)  // let nobody reach its own folder inside
        let folder = dir.path("user")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let keyFile = try TestVault.keyFile(dir, name: "user/key")
        let store = try SealedFileStore.create(
            at: folder.appendingPathComponent("v.cvault"), secret: .keyFile(keyFile), kdf: TestVault.kdf,
            configuration: TestVault.configuration(dir))
        for (key, value) in before { try store.save(value, for: key, options: .portable) }
        for name in ["", "v.cvault", "v.cvault.lock", "key"] {
            chown(folder.appendingPathComponent(name).path, nobody, nobody)
        }
        chmod(folder.path, 0o500)
        let helper = try HelperProcess(
            ["save-as-user", "\(nobody)", store.url.path, keyFile.path], environment: HelperProcess.environment(dir))
        #expect(helper.waitForExit() == 0, "\(helper.stderrText())")
        // A save appends to the vault file in place: the directory's mode does not matter.
        #expect(helper.lines.first == "saved", "\(helper.lines)")
        // A rotation writes a new file beside it: refused, with nothing changed.
        let line = helper.lines.dropFirst().first ?? ""
        print("read-only directory: \(line)")
        #expect(line.hasPrefix("rotate: error permission denied") && line.contains("nothing was changed"), "\(line)")
        chmod(folder.path, 0o700)
        for name in ["", "v.cvault", "v.cvault.lock", "key"] { chown(folder.appendingPathComponent(name).path, 0, 0) }
        let fresh = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        var expected = before
        expected[CredentialKey(service: "s", account: "new")] = Data("new".utf8)
        #expect(try VaultDirectory.contents(of: fresh) == expected, "the save kept, the rotation changed nothing")
        #expect(VaultDirectory.tempFiles(of: store.url).isEmpty, "no temp file left")
    }
}
