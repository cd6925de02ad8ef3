import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// The host secret behind device-only records and the device key: its
/// directory and file are checked on every use, and a missing secret that the vault depends on
/// is a clear error, never silently replaced by a new one (which would lose those records).
@Suite(.ownThread) final class HostSecretTests {
    let dir = TempDirectory()
    let deviceOnly = CredentialKey(service: "s", account: "device-only")
    let portable = CredentialKey(service: "s", account: "portable")

    private var secret: URL { TestVault.device(in: dir).hostSecretURL }

    private func reopen(_ store: SealedFileStore, secret key: VaultSecret = .passphrase(TestVault.passphrase)) throws -> SealedFileStore {
        try SealedFileStore.open(at: store.url, secret: key, configuration: TestVault.configuration(dir))
    }

    /// Says what happened (missing, which file), what is lost and how to recover.
    private func expectMissingSecretError(_ error: CredentialVaultError?, losing what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .notAvailable(let message)? = error else {
            Issue.record("expected notAvailable for a missing host secret, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        for part in [secret.path, "missing", what, "restore", "no new host secret was made"] {
            #expect(message.contains(part), "'\(part)' in: \(message)", sourceLocation: sourceLocation)
        }
        #expect(!FileManager.default.fileExists(atPath: secret.path), "no new host secret", sourceLocation: sourceLocation)
    }

    @Test func aDeletedHostSecretIsAnErrorWhileDeviceOnlyRecordsNeedIt() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("travels".utf8), for: portable, options: .portable)
        try store.save(Data("stays".utf8), for: deviceOnly, options: .default)
        #expect(unlink(secret.path) == 0)
        let reopened = try reopen(store)
        #expect(try reopened.load(portable) == Data("travels".utf8), "portable records still open")
        expectMissingSecretError(#expect(throws: CredentialVaultError.self) { try reopened.load(self.deviceOnly) }, losing: "1 device-only credential")
        // Nor does a new device-only save make one (it would seal with a secret the others lack).
        expectMissingSecretError(
            #expect(throws: CredentialVaultError.self) {
                try reopened.save(Data("new".utf8), for: CredentialKey(service: "s", account: "other"), options: .default)
            }, losing: "1 device-only credential")
        #expect(try reopened.listKeys(service: "s").count == 2, "nothing was changed")
    }

    @Test func aDeletedHostSecretIsAnErrorForADeviceKeyVault() throws {
        let store = try TestVault.create(dir, secret: .device)
        try store.save(Data("v".utf8), for: portable, options: .portable)
        #expect(unlink(secret.path) == 0)
        let error = #expect(throws: CredentialVaultError.self) { try self.reopen(store, secret: .device) }
        expectMissingSecretError(error, losing: "unlocked with the device key")
        // openOrCreate does not take it for a missing vault either.
        let again = #expect(throws: CredentialVaultError.self) {
            try SealedFileStore.openOrCreate(at: store.url, secret: .device, kdf: TestVault.kdf, configuration: TestVault.configuration(self.dir))
        }
        expectMissingSecretError(again, losing: "unlocked with the device key")
    }

    /// With nothing depending on it, a missing secret is simply made (first use, or a vault
    /// that only ever held portable records).
    @Test func aHostSecretIsMadeWhenNothingNeedsTheOldOne() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("travels".utf8), for: portable, options: .portable)
        #expect(!FileManager.default.fileExists(atPath: secret.path))
        try store.save(Data("stays".utf8), for: deviceOnly, options: .default)
        #expect(FileManager.default.fileExists(atPath: secret.path))
        #expect(try reopen(store).load(deviceOnly) == Data("stays".utf8))
    }

    /// The directory and the file are checked on every use, not only when the secret is made.
    @Test func theHostSecretAndItsDirectoryAreCheckedOnEveryUse() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("stays".utf8), for: deviceOnly, options: .default)
        let directory = secret.deletingLastPathComponent().path
        chmod(directory, 0o755)
        let loose = #expect(throws: CredentialVaultError.self) { try self.reopen(store).load(self.deviceOnly) }
        guard case .permissionDenied(let message)? = loose else {
            Issue.record("expected permissionDenied for a 0755 host-secret directory, got \(String(describing: loose))")
            return
        }
        #expect(message.contains("chmod 700 \(directory)"))
        chmod(directory, 0o700)
        // A symbolic link in place of the secret is not followed.
        let moved = dir.path("moved-secret")
        #expect(rename(secret.path, moved.path) == 0 && symlink(moved.path, secret.path) == 0)
        let linked = #expect(throws: CredentialVaultError.self) { try self.reopen(store).load(self.deviceOnly) }
        guard case .invalidArgument(let text)? = linked else {
            Issue.record("expected invalidArgument for a linked host secret, got \(String(describing: linked))")
            return
        }
        #expect(text.contains("symbolic link"))
        #expect(unlink(secret.path) == 0 && rename(moved.path, secret.path) == 0)
        #expect(try reopen(store).load(deviceOnly) == Data("stays".utf8))
    }
}
