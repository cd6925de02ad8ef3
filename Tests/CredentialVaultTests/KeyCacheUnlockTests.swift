import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The optional unlocked-key cache in the kernel keyring a passphrase vault
/// pays Argon2id once per cache lifetime, not per process; a changed key or a foreign entry
/// never opens it; the kernel expires it; `credvault --key-cache` uses it, and only when asked.
@Suite(.ownThread, .serialized) final class KeyCacheUnlockTests {
    let dir = TempDirectory()
    let cache = KernelKeyCache(prefix: "credvault-test-\(UInt32.random(in: 0...UInt32.max)):")
    let token = CredentialKey(service: "s", account: "token")

    private func vault() throws -> URL {
        let store = try TestVault.create(dir)
        try store.save(Data("value".utf8), for: token, options: .portable)
        return store.url
    }

    /// Unlocks through the cache; returns whether the key was asked for and the store.
    private func unlock(_ url: URL, secret key: VaultSecret = .passphrase(TestVault.passphrase), timeout: Duration = .seconds(60)) throws
        -> (asked: Bool, hit: Bool, store: SealedFileStore)
    {
        let asked = Mutex(false)
        let opened = try LockedVault(url: url).unlock(cachingKeyIn: cache, for: timeout, configuration: TestVault.configuration(dir)) {
            asked.withLock { $0 = true }
            return key
        }
        return (asked.withLock { $0 }, opened.hit, opened.store)
    }

    @Test func theSecondUnlockNeedsNoKey() throws {
        let url = try vault()
        defer { try? LockedVault(url: url).forgetCachedKey(in: cache) }
        let first = try unlock(url)
        #expect(first.asked && !first.hit)
        let second = try unlock(url)
        #expect(!second.asked && second.hit)
        #expect(try second.store.load(token) == Data("value".utf8))
    }

    @Test func aChangedPassphraseOrAForeignEntryIsNeverUsed() throws {
        let url = try vault()
        let locked = try LockedVault(url: url)
        _ = try unlock(url)
        let oldName = locked.keyCacheName
        try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            .changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: TestVault.kdf)
        #expect(try LockedVault(url: url).keyCacheName != oldName, "the name follows the key wrap")
        #expect(throws: CredentialVaultError.wrongPassphrase) { _ = try self.unlock(url, secret: .passphrase("wrong")) }
        // Another process of this uid writes garbage under the name: asked for the key, replaced.
        try cache.store(SecureBytes.random(count: 32), name: try LockedVault(url: url).keyCacheName, timeout: .seconds(60))
        let opened = try unlock(url, secret: .passphrase("new one"))
        #expect(opened.asked && !opened.hit)
        #expect(!(try unlock(url, secret: .passphrase("new one"))).asked)
        try LockedVault(url: url).forgetCachedKey(in: cache)
        try cache.remove(name: oldName)
        #expect(try unlock(url, secret: .passphrase("new one")).asked, "forgotten")
        try LockedVault(url: url).forgetCachedKey(in: cache)
    }

    @Test func theKernelExpiresTheEntry() throws {
        let url = try vault()
        #expect(try unlock(url, timeout: .seconds(600)).asked)
        #expect(!(try unlock(url, timeout: .seconds(600))).asked, "a hit while the entry lives")
        try LockedVault(url: url).forgetCachedKey(in: cache)
        #expect(try unlock(url, timeout: .seconds(1)).asked)
        // The kernel's timer is the event waited for: polled, with a ceiling many times the
        // entry's second (no assertion on when it fires).
        let cache = cache
        let name = try LockedVault(url: url).keyCacheName
        let expired = withinDeadline(.seconds(120), "the kernel expiring a 1 s entry") {
            while (try? cache.load(name: name)) != nil { usleep(50_000) }
            return true
        }
        #expect(expired == true)
        #expect(try unlock(url).asked, "expired: asked again")
        try LockedVault(url: url).forgetCachedKey(in: cache)
    }

    /// Through the CLI: the first lookup with the passphrase caches it, the next one needs none
    /// (and no Argon2id); without `--key-cache` the cache is never used; `--key-cache 0` forgets.
    @Test func theCLIUsesTheCacheOnlyWhenAsked() throws {
        let url = try vault()
        let passphraseFile = dir.path("passphrase")
        try TestVault.write(Array(TestVault.passphrase.utf8), to: passphraseFile)
        let environment = CLIChild.environment(dir)
        func lookup(_ extra: [String]) throws -> CLIChild.Outcome {
            try CLIChild.run(["lookup", "--vault", url.path] + extra + ["s", "token"], environment: environment)
        }
        defer { _ = try? lookup(["--key-cache", "0", "--passphrase-file", passphraseFile.path]) }
        #expect(try lookup(["--key-cache", "60"]).status == 2, "nothing cached yet, no key given: usage")
        #expect(try lookup(["--key-cache", "60", "--passphrase-file", passphraseFile.path]).stdout == Data("value".utf8))
        let cached = try lookup(["--key-cache", "60"])
        #expect(cached.status == 0 && cached.stdout == Data("value".utf8))
        #expect(try lookup([]).status == 2, "not asked: not used")
        #expect(try lookup(["--key-cache", "0", "--passphrase-file", passphraseFile.path]).status == 0)
        #expect(try lookup(["--key-cache", "60"]).status == 2, "forgotten")
        #expect(try lookup(["--key-cache", "forever"]).status == 2)
    }
}
