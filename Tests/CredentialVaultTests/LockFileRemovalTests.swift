import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// A removed or replaced `<vault>.lock` never gives a second holder: the vault
/// lock also locks the vault file itself, and a lock on a file that lost its name is dropped.
@Suite(.ownThread, .serialized) final class LockFileRemovalTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "s", account: "a")

    private func environment() -> [String: String] {
        ["CREDVAULT_TEST_HOST_SECRET": dir.path("this-machine/host-secret").path]
    }

    /// In one process: the lock held, its file removed, another attempt finds it held.
    @Test func aRemovedLockFileIsStillHeld() throws {
        let store = try TestVault.create(dir)
        let held = try VaultLock.acquire(store.location, timeout: .seconds(1))
        defer { held.release() }
        #expect(unlink(store.url.path + ".lock") == 0)
        let second = try VaultLock.tryAcquire(store.location)
        #expect(second == nil, "a second holder got the vault's lock while the first still holds it")
        second?.release()
    }

    /// A lock file replaced by another file (rename over it) while held: still held.
    @Test func aReplacedLockFileIsStillHeld() throws {
        let store = try TestVault.create(dir)
        let held = try VaultLock.acquire(store.location, timeout: .seconds(1))
        defer { held.release() }
        let other = store.url.deletingLastPathComponent().appendingPathComponent("other")
        #expect(FileManager.default.createFile(atPath: other.path, contents: nil, attributes: [.posixPermissions: 0o600]))
        #expect(rename(other.path, store.url.path + ".lock") == 0)
        #expect(try VaultLock.tryAcquire(store.location) == nil)
    }

    /// Another process holds the vault (`withExclusiveAccess`), the lock file is removed: a save
    /// waits and gets `busy`, it does not succeed at once.
    @Test func aSaveWaitsForAHolderWhoseLockFileWasRemoved() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let holder = try HelperProcess(["hold-exclusive", store.url.path, keyFile.path], environment: environment())
        defer { holder.kill() }
        try holder.waitForLine(startingWith: "holding")
        #expect(unlink(store.url.path + ".lock") == 0)
        let other = try SealedFileStore.open(
            at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir, lockTimeout: .milliseconds(300)))
        #expect(throws: CredentialVaultError.busy) { try other.save(Data("x".utf8), for: self.key, options: .portable) }
        holder.kill()
        try other.save(Data("x".utf8), for: key, options: .portable)
        #expect(try other.load(key) == Data("x".utf8))
    }

    /// Two processes storing while a thread keeps removing the lock file (and the journal is
    /// compacted now and then): every save lands and the vault is never `tampered`.
    @Test func twoWritersAndALockFileRemoverNeverDamageTheVault() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let lockPath = store.url.path + ".lock"
        let stopPath = dir.path("stop").path
        let remover = Thread {
            while access(stopPath, F_OK) != 0 {
                unlink(lockPath)
                usleep(1000)
            }
        }
        remover.start()
        let count = 120
        let writers = try ["left", "right"].map { prefix in
            try HelperProcess(["store-many", store.url.path, keyFile.path, prefix, "\(count)"], environment: environment())
        }
        for writer in writers {
            let status = writer.waitForExit()
            #expect(status == 0, "writer failed: \(writer.stderrText())")
        }
        #expect(FileManager.default.createFile(atPath: stopPath, contents: nil))
        let reopened = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        #expect(try reopened.listKeys(service: "stress").count == 2 * count)
        for prefix in ["left", "right"] {
            #expect(try reopened.load(CredentialKey(service: "stress", account: "\(prefix)-\(count - 1)")) == Data("\(prefix)-value-\(count - 1)".utf8))
        }
    }
}
