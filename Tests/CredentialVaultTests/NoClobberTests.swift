import Foundation
import Testing
import CredentialVaultTestSupport

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// A file put at the vault's name while a create or a rewrite was under way (a restore from a
/// backup during the key derivation) is never replaced: the create fails
/// with `invalidArgument`, the rewrite with `io`, and the file put there stays as it was.
@Suite(.ownThread, .serialized) final class NoClobberTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "s", account: "a")
    /// Slow enough (hundreds of milliseconds) for the restore to land during the derivation.

    /// A backup vault holding one credential, and its bytes.
    private func backup() throws -> (url: URL, bytes: [UInt8]) {
        let store = try TestVault.create(dir, name: "backup/backup.cvault")
        try store.save(Data("precious".utf8), for: key, options: .portable)
        return (store.url, try TestVault.bytes(store.url))
    }

    /// A configuration that, at the first passphrase derivation (while creating or rewriting:
    /// after the existence check, before the write), restores a copy of `bytes` to `url`.
    private func restoringDuringTheDerivation(_ bytes: [UInt8], to url: URL) -> SealedFileConfiguration {
        let staging = url.deletingLastPathComponent().appendingPathComponent(".restore")
        let done = Arrivals()
        var configuration = TestVault.configuration(dir)
        configuration.beforePassphraseDerivation = {
            guard done.count == 0 else { return }
            done.arrive()
            _ = FileManager.default.createFile(atPath: staging.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
            rename(staging.path, url.path)
        }
        return configuration
    }

    @Test func createNeverReplacesAVaultThatAppearedDuringIt() throws {
        let (_, bytes) = try backup()
        let url = dir.path("vault/new.cvault")
        mkdir(url.deletingLastPathComponent().path, 0o700)
        let configuration = restoringDuringTheDerivation(bytes, to: url)
        let error = #expect(throws: CredentialVaultError.self) {
            try SealedFileStore.create(at: url, secret: .passphrase("other"), kdf: TestVault.kdf, configuration: configuration)
        }
        guard case .invalidArgument(let message)? = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
        #expect(message.contains("already exists") && message.contains("not replaced"), "\(message)")
        #expect(try TestVault.bytes(url) == bytes, "the restored vault is untouched")
        let entries = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).sorted()
        #expect(entries == ["new.cvault", "new.cvault.lock"], "no temp file left: \(entries)")
    }

    /// The restore lands during the key derivation, which runs before the write takes the lock:
    /// the write then finds another vault under the name and leaves it (`io`). (A restore
    /// between the write's catch-up and its rename is refused by the rewrite itself,
    /// `AtomicFile.write`'s identity check, with the same kind of message.)
    @Test func aRewriteNeverReplacesAFileRestoredDuringIt() throws {
        let (_, bytes) = try backup()
        let url = try TestVault.create(dir).url
        try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            .save(Data("mine".utf8), for: key, options: .portable)
        let store = try SealedFileStore.open(
            at: url, secret: .passphrase(TestVault.passphrase), configuration: restoringDuringTheDerivation(bytes, to: url))
        let error = #expect(throws: CredentialVaultError.self) {
            try store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new"), kdf: TestVault.kdf)
        }
        guard case .io(let message)? = error else {
            Issue.record("expected io, got \(String(describing: error))")
            return
        }
        #expect(message.contains("replaced by another file") && message.contains("nothing was changed"), "\(message)")
        #expect(try TestVault.bytes(store.url) == bytes, "the restored vault is untouched")
    }
}
