import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Unlocking, key changes, device binding and on-disk hygiene of the sealed file.
@Suite(.ownThread) final class SealedFileTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "api.example.com", account: "alice")

    @Test func unlocksWithPassphraseKeyFileAndDeviceKey() throws {
        let keyFile = try TestVault.keyFile(dir)
        for (name, vaultKey) in [("p", VaultSecret.passphrase(TestVault.passphrase)), ("k", .keyFile(keyFile)), ("d", .device)] {
            let store = try TestVault.create(dir, name: "\(name)/v.cvault", secret: vaultKey)
            try store.save(Data("secret-\(name)".utf8), for: key, options: .portable)
            let again = try SealedFileStore.open(at: store.url, secret: vaultKey, configuration: TestVault.configuration(dir))
            #expect(try again.load(key) == Data("secret-\(name)".utf8))
        }
    }

    @Test func wrongPassphraseAndWrongKeyFileAreTypedAndChangeNothing() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .default)
        let before = try TestVault.bytes(store.url)
        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try SealedFileStore.open(at: store.url, secret: .passphrase("wrong"), configuration: TestVault.configuration(dir))
        }
        let keyFileVault = try TestVault.create(dir, name: "k/v.cvault", secret: .keyFile(try TestVault.keyFile(dir, name: "right")))
        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try SealedFileStore.open(
                at: keyFileVault.url, secret: .keyFile(try TestVault.keyFile(dir, name: "wrong-key")), configuration: TestVault.configuration(dir))
        }
        // A passphrase for a key-file vault says which key it takes, rather than "wrong".
        expectThrows(\CredentialVaultError.isInvalidArgument) {
            try SealedFileStore.open(at: keyFileVault.url, secret: .passphrase("x"), configuration: TestVault.configuration(dir))
        }
        #expect(try TestVault.bytes(store.url) == before)
    }

    @Test func exactlyOnePasswordDerivationPerUnlock() throws {
        let store = try TestVault.create(dir)
        let counter = PasswordDerivationCounter()
        let opened = try counter.counting {
            try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        }
        #expect(counter.value == 1)
        try counter.counting { try exercise(opened, other: store) }
        #expect(counter.value == 1)
    }

    private func exercise(_ opened: SealedFileStore, other store: SealedFileStore) throws {
        for i in 0..<20 { try opened.save(Data([UInt8(i)]), for: CredentialKey(service: "s", account: "\(i)"), options: .default) }
        for i in 0..<20 { _ = try opened.load(CredentialKey(service: "s", account: "\(i)")) }
        try store.save(Data("from the other handle".utf8), for: key, options: .default)
        #expect(try opened.load(key) == Data("from the other handle".utf8), "re-read after another writer, no KDF")
    }

    @Test func passphraseChangeRewrapsWithoutTouchingRecords() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("kept".utf8), for: key, options: .default)
        let recordsBefore = TestVault.sealedRecords(store)
        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try store.changeSecret(from: .passphrase("not it"), to: .passphrase("new one"), kdf: TestVault.kdf)
        }
        try store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: TestVault.kdf)
        #expect(TestVault.sealedRecords(store) == recordsBefore)
        let reread = try SealedFileStore.open(at: store.url, secret: .passphrase("new one"), configuration: TestVault.configuration(dir))
        #expect(TestVault.sealedRecords(reread) == recordsBefore, "the same sealed records, now in the snapshot")
        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        }
        let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase("new one"), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(key) == Data("kept".utf8))
        // Switch to a key file, then to the device key.
        let keyFile = try TestVault.keyFile(dir)
        try reopened.changeSecret(from: .passphrase("new one"), to: .keyFile(keyFile))
        try reopened.changeSecret(from: .keyFile(keyFile), to: .device)
        #expect(try SealedFileStore.open(at: store.url, secret: .device, configuration: TestVault.configuration(dir)).load(key) == Data("kept".utf8))
    }

    @Test func rotationResealsEveryRecord() throws {
        let store = try TestVault.create(dir)
        for i in 0..<5 { try store.save(Data("v\(i)".utf8), for: CredentialKey(service: "s", account: "\(i)"), options: .default) }
        let before = try TestVault.bytes(store.url)
        let recordsBefore = TestVault.sealedRecords(store)
        try store.rotateDataKey(secret: .passphrase(TestVault.passphrase))
        let after = try TestVault.bytes(store.url)
        let wrappedKey = VaultHeader.Offset.wrappedKey..<VaultHeader.Offset.wrappedKey + VaultHeader.wrappedKeySize
        #expect(Array(before[wrappedKey]) != Array(after[wrappedKey]), "the data key is re-wrapped")
        // The same record ids, and no record ciphertext survives rotation.
        let recordsAfter = TestVault.sealedRecords(store)
        #expect(Set(recordsAfter.keys) == Set(recordsBefore.keys))
        #expect(Set(recordsAfter.values).isDisjoint(with: recordsBefore.values))
        for box in recordsBefore.values {
            #expect(after.firstRange(of: box[..<32]) == nil, "an old ciphertext is still in the file")
        }
        #expect(try store.load(CredentialKey(service: "s", account: "3")) == Data("v3".utf8))
        let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(CredentialKey(service: "s", account: "4")) == Data("v4".utf8))
    }

    @Test func copiedToAnotherMachineOpensPortableButNotDeviceOnly() throws {
        let store = try TestVault.create(dir)
        let portable = CredentialKey(service: "s", account: "portable")
        let deviceOnly = CredentialKey(service: "s", account: "device-only")
        try store.save(Data("travels".utf8), for: portable, options: .portable)
        try store.save(Data("stays".utf8), for: deviceOnly, options: .default)
        let elsewhere = try SealedFileStore.open(
            at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, device: "other-machine"))
        #expect(try elsewhere.load(portable) == Data("travels".utf8))
        #expect(throws: CredentialVaultError.deviceMismatch) { try elsewhere.load(deviceOnly) }
        #expect(throws: CredentialVaultError.deviceMismatch) { try elsewhere.take(deviceOnly) }
        #expect(try elsewhere.listKeys(service: "s").count == 2)
        // Writes and rotation on the other machine keep the device-only record intact.
        try elsewhere.save(Data("x".utf8), for: CredentialKey(service: "s", account: "new"), options: .portable)
        try elsewhere.rotateDataKey(secret: .passphrase(TestVault.passphrase))
        let home = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try home.load(deviceOnly) == Data("stays".utf8))
        // Same host secret but another machine id is another machine too.
        var cloned = TestVault.device(in: dir)
        cloned.machineID = "cloned-disk"
        let clone = try SealedFileStore.open(
            at: store.url, secret: .passphrase(TestVault.passphrase), configuration: SealedFileConfiguration(device: cloned))
        #expect(throws: CredentialVaultError.deviceMismatch) { try clone.load(deviceOnly) }
    }

    @Test func deviceKeyVaultDoesNotOpenOnAnotherMachine() throws {
        let store = try TestVault.create(dir, secret: .device)
        try store.save(Data("v".utf8), for: key, options: .portable)
        #expect(throws: CredentialVaultError.deviceMismatch) {
            try SealedFileStore.open(at: store.url, secret: .device, configuration: TestVault.configuration(dir, device: "other-machine"))
        }
    }

    @Test func noNameOrValueAppearsInTheFile() throws {
        let store = try TestVault.create(dir)
        let secret = "s3cr3t-value-0123456789"
        try store.save(Data(secret.utf8), for: CredentialKey(service: "very-visible-service", account: "very-visible-account", label: "a label"), options: .portable)
        let text = String(decoding: try TestVault.bytes(store.url), as: UTF8.self)
        for needle in [secret, "very-visible-service", "very-visible-account", "a label"] { #expect(!text.contains(needle)) }
    }

    @Test func filesArePrivateAndLoosePermissionsAreRefused() throws {
        let store = try TestVault.create(dir)
        let directory = store.url.deletingLastPathComponent().path
        #expect(try FileManager.default.attributesOfItem(atPath: store.url.path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int == 0o700)
        chmod(store.url.path, 0o644)
        expectThrows(\CredentialVaultError.isPermissionDenied) { try LockedVault(url: store.url) }
        chmod(store.url.path, 0o600)
        for loose in [0o775, 0o757, 0o777] as [mode_t] {
            chmod(directory, loose)
            let error = #expect(throws: CredentialVaultError.self) { try LockedVault(url: store.url) }
            guard case .permissionDenied(let message) = error else {
                Issue.record("a vault in a directory others can write must be refused with permissionDenied (mode \(String(loose, radix: 8)))")
                return
            }
            #expect(message.contains("writable by its group or by other users") && message.contains("chmod 700"), "\(message)")
            expectThrows(\CredentialVaultError.isPermissionDenied) { try TestVault.create(dir, name: "vault/second.cvault") }
        }
        chmod(directory, 0o700)
        _ = try LockedVault(url: store.url)
    }

    /// systemd's `StateDirectory=` makes the directory 0755: others may list it (a vault's name,
    /// size and times, never its contents), nobody else can replace what is in it. Accepted,
    /// for opening and for creating a vault; the vault file itself stays 0600.
    @Test func aDirectoryOthersCanReadButNotWriteHoldsVaults() throws {
        let store = try TestVault.create(dir)
        let directory = store.url.deletingLastPathComponent().path
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        for readable in [0o755, 0o750, 0o705] as [mode_t] {
            chmod(directory, readable)
            let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            #expect(try reopened.load(CredentialKey(service: "s", account: "a")) == Data("v".utf8))
            try reopened.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        }
        let second = try TestVault.create(dir, name: "vault/second.cvault")
        #expect(try FileManager.default.attributesOfItem(atPath: second.url.path)[.posixPermissions] as? Int == 0o600)
        chmod(store.url.path, 0o644)
        expectThrows(\CredentialVaultError.isPermissionDenied) { try LockedVault(url: store.url) }
    }

    @Test func twoHandlesSeeEachOthersWrites() throws {
        let a = try TestVault.create(dir)
        let b = try SealedFileStore.open(at: a.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        try a.save(Data("from a".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
        try b.save(Data("from b".utf8), for: CredentialKey(service: "s", account: "b"), options: .default)
        #expect(try a.load(CredentialKey(service: "s", account: "b")) == Data("from b".utf8))
        #expect(try b.load(CredentialKey(service: "s", account: "a")) == Data("from a".utf8))
        #expect(try a.listKeys(service: "s").count == 2)
        #expect(try b.take(CredentialKey(service: "s", account: "a")) != nil)
        #expect(try a.take(CredentialKey(service: "s", account: "a")) == nil, "taken once across handles")
    }

    @Test func expiredEphemeralRecordsArePurgedFromDisk() throws {
        let clock = ManualClock()
        let store = try TestVault.create(dir, clock: clock)
        try store.save(Data("verifier".utf8), for: key, options: .ephemeral(ttl: .seconds(30)))
        #expect(try TestVault.storedRecordCount(store, clock: clock) == 1)
        clock.advance(by: .seconds(31))
        try store.save(Data("other".utf8), for: CredentialKey(service: "s", account: "other"), options: .default)
        #expect(try TestVault.storedRecordCount(store, clock: clock) == 1, "purged by the next write")
        // And on open.
        try store.save(Data("v2".utf8), for: key, options: .ephemeral(ttl: .seconds(30)))
        clock.advance(by: .seconds(31))
        #expect(try TestVault.storedRecordCount(store, clock: clock) == 1, "purged on open")
        // ... and from the file: a reader whose clock is behind still finds one record.
        #expect(try TestVault.storedRecordCount(store, clock: ManualClock()) == 1)
    }

    @Test func exclusiveAccessNestsAndExcludesOtherHandles() async throws {
        let a = try TestVault.create(dir, lockTimeout: .milliseconds(200))
        let b = try await SealedFileStore.open(
            at: a.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, lockTimeout: .milliseconds(200)))
        let key = self.key
        _ = try await a.withExclusiveAccess {
            try await a.save(Data("inside".utf8), for: key, options: .default)
            // Another task (no inherited lock) waits, then gives up with `busy`.
            let other = await Task.detached { Result { () throws(CredentialVaultError) in try b.save(Data("blocked".utf8), for: key, options: .default) } }.value
            #expect(throws: CredentialVaultError.busy) { try other.get() }
            _ = try await a.withExclusiveAccess { try a.delete(key) }
            try await a.save(Data("inside again".utf8), for: key, options: .default)
        }
        try await b.save(Data("after".utf8), for: key, options: .default)
        await #expect(try a.load(key) == Data("after".utf8))
    }

    @Test func descriptionsAreRedacted() {
        let secret = SecureBytes(copying: Array("hunter2".utf8))
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        #expect(!"\(VaultSecret.passphrase("hunter2"))".contains("hunter2"))
    }
}
