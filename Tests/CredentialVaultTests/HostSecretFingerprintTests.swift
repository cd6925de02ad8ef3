import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// Once a host secret has existed on this machine, none is ever made again automatically, by
/// any vault: `host-secret.id` beside it says it existed. And the secret is
/// made whole before it has its name, so nobody reads it half written.
@Suite(.ownThread) final class HostSecretFingerprintTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "s", account: "a")

    private var secret: URL { TestVault.device(in: dir).hostSecretURL }

    private func expectRefusal(_ error: CredentialVaultError?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .notAvailable(let message)? = error else {
            Issue.record("expected notAvailable, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        for part in [secret.path + " is missing", secret.path + ".id", "existed", "restore", "no new host secret was made", "remove \(secret.path).id"] {
            #expect(message.contains(part), "'\(part)' in: \(message)", sourceLocation: sourceLocation)
        }
        #expect(!FileManager.default.fileExists(atPath: secret.path), "no new host secret", sourceLocation: sourceLocation)
    }

    /// Vault a needs the secret; vault b (a device-only save, or a new device-key vault) must
    /// not make a new one, and a then still says the secret is missing.
    @Test func anotherVaultNeverMakesANewHostSecret() throws {
        let a = try TestVault.create(dir, name: "a/a.cvault")
        try a.save(Data("stays".utf8), for: key, options: .default)
        #expect(FileManager.default.fileExists(atPath: secret.path + ".id"))
        #expect(unlink(secret.path) == 0)
        let b = try TestVault.create(dir, name: "b/b.cvault")
        expectRefusal(#expect(throws: CredentialVaultError.self) { try b.save(Data("new".utf8), for: self.key, options: .default) })
        expectRefusal(#expect(throws: CredentialVaultError.self) { try TestVault.create(self.dir, name: "c/c.cvault", secret: .device) })
        let reopened = try SealedFileStore.open(at: a.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        let error = #expect(throws: CredentialVaultError.self) { try reopened.load(self.key) }
        guard case .notAvailable? = error else {
            Issue.record("vault a says \(String(describing: error)), not that the host secret is missing")
            return
        }
    }

    /// Starting over is explicit: with the fingerprint file removed, a new secret is made.
    @Test func removingTheFingerprintFileStartsOver() throws {
        let a = try TestVault.create(dir, name: "a/a.cvault")
        try a.save(Data("stays".utf8), for: key, options: .default)
        #expect(unlink(secret.path) == 0)
        #expect(unlink(secret.path + ".id") == 0)
        let b = try TestVault.create(dir, name: "b/b.cvault")
        try b.save(Data("new".utf8), for: key, options: .default)
        #expect(FileManager.default.fileExists(atPath: secret.path))
        #expect(FileManager.default.fileExists(atPath: secret.path + ".id"))
        #expect(try b.load(key) == Data("new".utf8))
    }

    /// A secret made before fingerprint files existed gets one on its next use.
    @Test func anOlderSecretGetsItsFingerprintFile() throws {
        let a = try TestVault.create(dir)
        try a.save(Data("stays".utf8), for: key, options: .default)
        #expect(unlink(secret.path + ".id") == 0)
        let reopened = try SealedFileStore.open(at: a.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(key) == Data("stays".utf8))
        #expect(FileManager.default.fileExists(atPath: secret.path + ".id"))
    }

    /// A host secret of the wrong size (an empty file) is an error naming that file, not
    /// "the vault data is corrupted".
    @Test func aWrongSizeHostSecretNamesItsFile() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("stays".utf8), for: key, options: .default)
        #expect(truncate(secret.path, 0) == 0)
        let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        let error = #expect(throws: CredentialVaultError.self) { try reopened.load(self.key) }
        guard case .notAvailable(let message)? = error else {
            Issue.record("expected notAvailable naming the host secret, got \(String(describing: error))")
            return
        }
        #expect(message.contains(secret.path) && message.contains("0 bytes") && message.contains("restore"), "\(message)")
    }

    /// Many first uses at once: every one gets the same secret, none sees it half written.
    @Test func concurrentFirstUsesAgreeOnOneSecret() throws {
        for round in 0..<20 {
            let url = dir.path("race-\(round)/host-secret")
            let results = Mutex<[Result<[UInt8], CredentialVaultError>]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let result = Result { () throws(CredentialVaultError) -> [UInt8] in
                    try HostSecret.loadOrCreate(at: url, need: { .none }).withUnsafeBytes { Array($0) }
                }
                results.withLock { $0.append(result) }
            }
            let secrets = try results.withLock { try $0.map { try $0.get() } }
            #expect(Set(secrets).count == 1, "round \(round): \(Set(secrets).count) different secrets")
            #expect(secrets.first?.count == HostSecret.size)
        }
    }
}
