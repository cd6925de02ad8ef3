import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVault

/// After a secret is deleted, overwritten, or its holder released, no copy made by the library
/// is left in this process's heap, guarded memory or globals (a helper process scans every
/// readable mapping through /proc/PID/mem; pieces in dead stack frames are reported, not
/// failed: see `MemoryScanner`).
/// The test's own copies are wiped first: what the caller keeps is the caller's to wipe.
@Suite(.enabled(if: !Sanitizers.active, "memory scans are meaningless under ASan/TSan (their allocators and shadow memory)"))
final class MemoryHygieneTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "hygiene", account: "token")

    private func expectAbsent(_ secret: MaskedSecret, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let report = MemoryScanner.scan(for: secret)
        #expect(report.bytesScanned > 1 << 20, "the scan read memory", sourceLocation: sourceLocation)
        #expect(report.failure == nil, "\(report)", sourceLocation: sourceLocation)
        #expect(report.hits.isEmpty, "\(when): \(report)", sourceLocation: sourceLocation)
        if !report.stackHits.isEmpty { print("memory hygiene: \(when): \(report.stackHits.count) pieces in dead stack frames") }
    }

    private func expectPresent(_ secret: MaskedSecret, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!MemoryScanner.scan(for: secret).hits.isEmpty, "\(when): the scan must see a live copy", sourceLocation: sourceLocation)
    }

    @Test func theScannerSeesALiveCopyAndNotAWipedOne() {
        let secret = MaskedSecret()
        var data = secret.data()
        expectPresent(secret, "a live Data")
        wipe(&data)
        expectAbsent(secret, "after wiping the Data")
        var text = secret.string()
        expectPresent(secret, "a live String")
        wipe(&text)
        expectAbsent(secret, "after wiping the String")
    }

    @Test func inMemoryStoreLeavesNoCopyAfterDeleteOverwriteOrRelease() throws {
        let deleted = MaskedSecret(), overwritten = MaskedSecret(), released = MaskedSecret(), taken = MaskedSecret()
        var store: InMemoryStore? = InMemoryStore()
        for (secret, account) in [(deleted, "deleted"), (overwritten, "overwritten"), (released, "released"), (taken, "taken")] {
            var value = secret.data()
            try store!.save(value, for: CredentialKey(service: "s", account: account), options: .default)
            wipe(&value)
        }
        expectPresent(deleted, "stored in the guarded arena")
        var copy = try store!.load(CredentialKey(service: "s", account: "deleted")) ?? Data()
        wipe(&copy)
        try store!.delete(CredentialKey(service: "s", account: "deleted"))
        expectAbsent(deleted, "deleted")
        try store!.save(Data("replacement".utf8), for: CredentialKey(service: "s", account: "overwritten"), options: .default)
        expectAbsent(overwritten, "overwritten")
        var took = try store!.take(CredentialKey(service: "s", account: "taken")) ?? Data()
        wipe(&took)
        expectAbsent(taken, "taken")
        // Many more values force the arena to move to a bigger region: the old one is wiped.
        for i in 0..<400 { try store!.save(Data(count: 100), for: CredentialKey(service: "fill", account: "\(i)"), options: .default) }
        expectPresent(released, "still stored after the arena grew")
        store = nil
        expectAbsent(released, "store released")
    }

    @Test func sealedFileKeepsNoPlaintextOfStoredLoadedOrDeletedValues() throws {
        let store = try TestVault.create(dir)
        let portable = MaskedSecret(), deviceOnly = MaskedSecret()
        for (secret, options, account) in [(portable, StorageOptions.portable, "p"), (deviceOnly, .default, "d")] {
            var value = secret.data()
            try store.save(value, for: CredentialKey(service: "s", account: account), options: options)
            wipe(&value)
            expectAbsent(secret, "stored (\(account)): only ciphertext is kept")
            var loaded = try store.load(CredentialKey(service: "s", account: account)) ?? Data()
            expectPresent(secret, "the caller's loaded copy")
            wipe(&loaded)
            expectAbsent(secret, "loaded (\(account)) and the caller's copy wiped: no decrypted temporary left")
        }
        try store.rotateDataKey(secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf)
        expectAbsent(portable, "after rotation (every record re-sealed)")
        var took = try store.take(CredentialKey(service: "s", account: "d")) ?? Data()
        wipe(&took)
        expectAbsent(deviceOnly, "taken")
        try store.delete(CredentialKey(service: "s", account: "p"))
        expectAbsent(portable, "deleted")
    }

    @Test func passphraseIsNotKeptAfterUnlockChangeOrRelease() throws {
        let old = MaskedSecret(), new = MaskedSecret()
        func key(_ secret: MaskedSecret) -> VaultSecret {
            var bytes = secret.data()
            defer { wipe(&bytes) }
            return bytes.withUnsafeBytes { .passphrase(SecureBytes(copying: $0)) }
        }
        do {
            let url = try SealedFileStore.create(
                at: dir.path("v/p.cvault"), secret: key(old), kdf: TestVault.kdf, configuration: TestVault.configuration(dir)
            ).url
            let store = try SealedFileStore.open(at: url, secret: key(old), configuration: TestVault.configuration(dir))
            try store.save(Data("x".utf8), for: self.key, options: .portable)
            try store.changeSecret(from: key(old), to: key(new), kdf: TestVault.kdf)
            expectAbsent(old, "the old passphrase while the vault is open")
            expectAbsent(new, "the new passphrase while the vault is open")
        }
        expectAbsent(old, "the old passphrase after release")
    }

    /// Repeated, so that a forgotten temporary leaves several remnants, one of which survives.
    @Test func stringConveniencesLeaveNoCopyOfTheValue() throws {
        for store in [InMemoryStore() as any TokenStorageAdapter, try TestVault.create(dir)] {
            let secret = MaskedSecret()
            for _ in 0..<10 {
                var value = secret.string()
                try store.save(key: "token", value: value)
                wipe(&value)
            }
            if store is SealedFileStore { expectAbsent(secret, "\(type(of: store)).save(key:value:)") }
            for _ in 0..<10 {
                // (No #expect on the value itself: Swift Testing keeps copies of what it inspects.)
                var loaded = try store.load(key: "token") ?? "missing"
                if loaded == "missing" { Issue.record("the value was not found") }
                wipe(&loaded)
            }
            try store.delete(key: "token")
            expectAbsent(secret, "\(type(of: store)) after load(key:), delete(key:)")
        }
    }
}
