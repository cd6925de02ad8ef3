import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// One vault, one name, one lock. The lock file is named after the vault,
/// so a second name (a symbolic or a hard link) would get a second lock and two writers would
/// destroy the vault; such a vault is refused, with an error naming the path. A rewrite never
/// replaces a link, and the lock file itself must be a private regular file of the user's.
@Suite(.ownThread) final class VaultNameTests {
    let dir = TempDirectory()

    private func expectRefusal(_ url: URL, saying word: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: CredentialVaultError.self, sourceLocation: sourceLocation) {
            try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(self.dir))
        }
        guard case .invalidArgument(let message)? = error else {
            Issue.record("expected invalidArgument for \(url.path), got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(message.contains(url.path) && message.contains(word), "\(message)", sourceLocation: sourceLocation)
    }

    @Test func aVaultReachedThroughASymbolicLinkIsRefused() throws {
        let store = try TestVault.create(dir)
        let link = dir.path("elsewhere/link.cvault")
        mkdir(link.deletingLastPathComponent().path, 0o700)
        #expect(symlink(store.url.path, link.path) == 0)
        expectRefusal(link, saying: "symbolic link")
        // Nor is a new vault created through a link.
        expectThrows(\CredentialVaultError.isInvalidArgument) {
            try SealedFileStore.openOrCreate(
                at: link, secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: TestVault.configuration(self.dir))
        }
        var info = stat()
        #expect(lstat(link.path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link is left as it was")
    }

    @Test func aVaultWithASecondHardLinkIsRefusedByEveryName() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        let second = dir.path("vault/second.cvault")
        #expect(link(store.url.path, second.path) == 0)
        expectRefusal(second, saying: "2 hard links")
        expectRefusal(store.url, saying: "2 hard links")
        // An open handle does not write through it either, and nothing is changed.
        let before = try TestVault.bytes(store.url)
        expectThrows(\CredentialVaultError.isInvalidArgument) {
            try store.save(Data("w".utf8), for: CredentialKey(service: "s", account: "b"), options: .portable)
        }
        #expect(try TestVault.bytes(store.url) == before)
        unlink(second.path)
        try store.save(Data("w".utf8), for: CredentialKey(service: "s", account: "b"), options: .portable)
        #expect(try store.listKeys(service: "s").count == 2)
    }

    /// The attack of the issue: two processes storing through two names. The name that is a
    /// link is refused at once; the writer through the real name loses nothing.
    @Test func twoProcessesThroughTwoNamesNeverCorruptTheVault() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let link = dir.path("vault/alias.cvault")
        #expect(symlink(store.url.lastPathComponent, link.path) == 0)
        let environment = HelperProcess.environment(dir)
        let real = try HelperProcess(["store-many", store.url.path, keyFile.path, "real", "150"], environment: environment)
        let alias = try HelperProcess(["store-many", link.path, keyFile.path, "alias", "150"], environment: environment)
        #expect(alias.waitForExit() != 0)
        #expect(alias.stderrText().contains("symbolic link"))
        #expect(real.waitForExit() == 0)
        let reopened = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        let keys = try reopened.listKeys(service: "stress")
        #expect(keys.count == 150)
        for key in keys { #expect(try reopened.load(key) != nil) }
    }

    /// A rewrite (here a key change) never replaces a symbolic link put at the vault's name:
    /// the link stays a link and its target keeps its content.
    @Test func aRewriteNeverReplacesALink() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        let moved = dir.path("vault/moved.cvault")
        #expect(rename(store.url.path, moved.path) == 0)
        #expect(symlink(moved.lastPathComponent, store.url.path) == 0)
        let target = try TestVault.bytes(moved)
        expectThrows(\CredentialVaultError.isInvalidArgument) {
            try store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new"), kdf: TestVault.kdf)
        }
        var info = stat()
        #expect(lstat(store.url.path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "still a link")
        #expect(try TestVault.bytes(moved) == target)
    }

    @Test func theLockFileMustBeAPrivateRegularFileOfTheUser() throws {
        let store = try TestVault.create(dir)
        let lock = store.url.path + ".lock"
        let key = CredentialKey(service: "s", account: "a")
        func expectRefused(_ what: String, saying word: String, as kind: (CredentialVaultError) -> Bool) {
            let error = #expect(throws: CredentialVaultError.self, "a lock file that is \(what)") {
                try store.save(Data("v".utf8), for: key, options: .portable)
            }
            if let error { #expect(kind(error) && "\(error)".contains(word), "\(what): \(error)") }
        }
        let isInvalid: (CredentialVaultError) -> Bool = { if case .invalidArgument = $0 { true } else { false } }
        let isDenied: (CredentialVaultError) -> Bool = { if case .permissionDenied = $0 { true } else { false } }

        unlink(lock)
        let decoy = dir.path("decoy")
        _ = FileManager.default.createFile(atPath: decoy.path, contents: Data(), attributes: [.posixPermissions: 0o600])
        #expect(symlink(decoy.path, lock) == 0)
        expectRefused("a symbolic link", saying: "symbolic link", as: isInvalid)

        unlink(lock)
        #expect(mkfifo(lock, 0o600) == 0)
        expectRefused("a FIFO", saying: "FIFO", as: isInvalid)

        unlink(lock)
        _ = FileManager.default.createFile(atPath: lock, contents: Data(), attributes: [.posixPermissions: 0o644])
        chmod(lock, 0o644)
        expectRefused("readable by others", saying: "chmod 600", as: isDenied)

        if geteuid() == 0 {
            chmod(lock, 0o600)
            #expect(chown(lock, 4242, 4242) == 0)
            expectRefused("another user's", saying: "another user", as: isDenied)
        }

        unlink(lock)
        try store.save(Data("v".utf8), for: key, options: .portable)
        #expect(try store.load(key) == Data("v".utf8))
    }
}
