import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// `VaultSecret.createKeyFile(at:)`: the library's key-file generation, the one
/// `credvault keygen` uses.
@Suite(.ownThread) struct KeyFileTests {
    let dir = TempDirectory()

    @Test func createsA32ByteFileOnlyTheUserCanReadThatUnlocksAVault() throws {
        let url = dir.path("vault.key")
        let key = try VaultSecret.createKeyFile(at: url)
        var info = stat()
        #expect(lstat(url.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 32)
        let store = try SealedFileStore.create(at: dir.path("v/test.cvault"), secret: key, configuration: TestVault.configuration(dir))
        try store.save(Data("s".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        let again = try SealedFileStore.open(at: store.url, secret: .keyFile(url), configuration: TestVault.configuration(dir))
        #expect(try again.load(CredentialKey(service: "s", account: "a")) == Data("s".utf8))
        // Two key files are two random keys.
        let other = dir.path("other.key")
        _ = try VaultSecret.createKeyFile(at: other)
        #expect(try Data(contentsOf: url) != Data(contentsOf: other))
    }

    @Test func neverReplacesAFileOrFollowsALink() throws {
        let existing = dir.path("existing.key")
        try Data("keep me".utf8).write(to: existing)
        expectThrows(\CredentialVaultError.isInvalidArgument) { try VaultSecret.createKeyFile(at: existing) }
        #expect(try Data(contentsOf: existing) == Data("keep me".utf8))

        let target = dir.path("target")
        let link = dir.path("link.key")
        symlink(target.path, link.path)  // dangling: creating through it would make `target`
        expectThrows(\CredentialVaultError.isInvalidArgument) { try VaultSecret.createKeyFile(at: link) }
        #expect(!FileManager.default.fileExists(atPath: target.path), "nothing was created through the link")
    }

    @Test func aDirectoryOthersCanWriteIsRefused() throws {
        let shared = dir.path("shared")
        mkdir(shared.path, 0o777)
        chmod(shared.path, 0o777)
        let error = #expect(throws: CredentialVaultError.self) { try VaultSecret.createKeyFile(at: shared.appendingPathComponent("k")) }
        guard case .permissionDenied? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: shared.appendingPathComponent("k").path))
    }

    @Test func theAsyncFormCreatesTheSameFile() async throws {
        let url = dir.path("async.key")
        _ = try await VaultSecret.createKeyFile(at: url)
        #expect(try Data(contentsOf: url).count == 32)
    }

    @Test func aDirectoryThatCannotTakeTheFileIsATypedErrorAndLeavesNothing() throws {
        expectThrows(\CredentialVaultError.isIO) { try VaultSecret.createKeyFile(at: dir.path("missing/dir/vault.key")) }
        let readOnly = dir.path("read-only")
        mkdir(readOnly.path, 0o500)
        defer { chmod(readOnly.path, 0o700) }
        if geteuid() != 0 {  // root writes anyway
            expectThrows(\CredentialVaultError.isPermissionDenied) { try VaultSecret.createKeyFile(at: readOnly.appendingPathComponent("k")) }
        }
    }
}
