import Foundation
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// A file put at the vault's name while a create or a rewrite was under way (a restore from a
/// backup during the key derivation) is never replaced (review 2, R2-3): the create fails
/// with `invalidArgument`, the rewrite with `io`, and the file put there stays as it was.
@Suite(.serialized) final class NoClobberTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "s", account: "a")
    /// Slow enough (hundreds of milliseconds) for the restore to land during the derivation.
    let slowKDF = try! KDFParameters(opsLimit: 6, memLimitBytes: 128 << 20)

    /// A backup vault holding one credential, and its bytes.
    private func backup() throws -> (url: URL, bytes: [UInt8]) {
        let store = try TestVault.create(dir, name: "backup/backup.cvault")
        try store.save(Data("precious".utf8), for: key, options: .portable)
        return (store.url, try TestVault.bytes(store.url))
    }

    /// Starts a thread that, once `start` exists and `delay` has passed, renames a copy of
    /// `bytes` to `url` (the restore).
    private func restore(_ bytes: [UInt8], to url: URL, after start: String, delay: useconds_t = 50_000) -> Thread {
        let staging = url.deletingLastPathComponent().appendingPathComponent(".restore")
        let thread = Thread {
            while access(start, F_OK) != 0 { usleep(1000) }
            usleep(delay)
            _ = FileManager.default.createFile(atPath: staging.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
            rename(staging.path, url.path)
        }
        thread.start()
        return thread
    }

    @Test func createNeverReplacesAVaultThatAppearedDuringIt() throws {
        let (_, bytes) = try backup()
        let url = dir.path("vault/new.cvault")
        mkdir(url.deletingLastPathComponent().path, 0o700)
        // The lock file appears just before the existence check; the restore lands after it.
        _ = restore(bytes, to: url, after: url.path + ".lock")
        let error = #expect(throws: CredentialVaultError.self) {
            try SealedFileStore.create(at: url, key: .passphrase("other"), kdf: self.slowKDF, configuration: TestVault.configuration(self.dir))
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
        let store = try TestVault.create(dir)
        try store.save(Data("mine".utf8), for: key, options: .portable)
        let marker = dir.path("go").path
        _ = restore(bytes, to: store.url, after: marker)
        #expect(FileManager.default.createFile(atPath: marker, contents: nil))
        let error = #expect(throws: CredentialVaultError.self) {
            try store.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("new"), kdf: self.slowKDF)
        }
        guard case .io(let message)? = error else {
            Issue.record("expected io, got \(String(describing: error))")
            return
        }
        #expect(message.contains("replaced by another file") && message.contains("nothing was changed"), "\(message)")
        #expect(try TestVault.bytes(store.url) == bytes, "the restored vault is untouched")
    }
}
