import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

#if canImport(Glibc)
import Glibc
#endif

/// What another process of the user can put at the keyring file's name or beside it: nothing
/// is followed, read from or written through, and nothing waits.
@Suite(.ownThread) struct LibsecretFilePathTests {
    let key = CredentialKey(service: "api.example.com", account: "alice")

    @Test func aSymbolicLinkAtThePathIsRefusedAndItsTargetLeftAlone() throws {
        let file = SecretToolFile()
        try file.store().synchronous.save(Data("secret".utf8), for: key)
        let target = file.directory.path("elsewhere.keyring").path
        #expect(rename(file.path, target) == 0)
        #expect(symlink(target, file.path) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        let store = try file.store()
        expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.load(key) }
        expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.save(Data("new".utf8), for: key) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
    }

    @Test func aFIFOAtThePathIsRefusedWithoutWaiting() throws {
        let file = SecretToolFile()
        try FileManager.default.createDirectory(atPath: file.directory.path("keyrings").path, withIntermediateDirectories: true)
        #expect(chmod(file.directory.path("keyrings").path, 0o700) == 0)
        #expect(mkfifo(file.path, 0o600) == 0)
        let store = try file.store()
        expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.load(key) }
        expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.save(Data("new".utf8), for: key) }
    }

    @Test func aSymbolicLinkInPlaceOfTheBackupIsRemovedNotItsTarget() throws {
        let file = SecretToolFile()
        let store = try file.store()
        try store.synchronous.save(Data("secret".utf8), for: key)
        let target = file.directory.path("precious").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
        #expect(symlink(target, file.path + "~") == 0)
        try store.synchronous.save(Data("new".utf8), for: key)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("keep me".utf8))
        #expect(!FileManager.default.fileExists(atPath: file.path + "~"))
    }
}
