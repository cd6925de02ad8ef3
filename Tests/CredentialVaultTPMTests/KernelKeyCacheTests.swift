import CredentialVault
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The unlocked-key cache in the real kernel keyring: stored, read back, replaced, removed;
/// expired by the kernel; readable by this uid from another session keyring; not by nobody.
@Suite(.serialized)
final class KernelKeyCacheTests {
    let cache = KernelKeyCache(prefix: "credvault-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)):")

    deinit {
        for name in ["a", "expiring", "shared"] { try? cache.remove(name: name) }
    }

    @Test func storesReadsReplacesAndRemoves() throws {
        #expect(try cache.load(name: "a") == nil)
        let first = SecureBytes.random(count: 32), second = SecureBytes.random(count: 48)
        try cache.store(first, name: "a", timeout: .seconds(60))
        #expect(try cache.load(name: "a")?.constantTimeEquals(first) == true)
        try cache.store(second, name: "a", timeout: .seconds(60))
        #expect(try cache.load(name: "a")?.constantTimeEquals(second) == true)
        try cache.remove(name: "a")
        #expect(try cache.load(name: "a") == nil)
        try cache.remove(name: "a")
    }

    @Test func theKernelExpiresTheKey() throws {
        let key = SecureBytes.random(count: 32)
        let clock = ContinuousClock()
        let stored = clock.now
        try cache.store(key, name: "expiring", timeout: .seconds(2))
        #expect(try cache.load(name: "expiring")?.constantTimeEquals(key) == true)
        // Polls the kernel (no process of ours removes it): gone after the timeout, not before.
        var gone: ContinuousClock.Instant?
        while clock.now - stored < .seconds(5) {
            if try cache.load(name: "expiring") == nil {
                gone = clock.now
                break
            }
            try waitBriefly()
        }
        let after = try #require(gone, "still readable 5 s after a 2 s timeout")
        // The kernel counts whole seconds: expiry comes 1 to 2 s after a 2 s timeout was set.
        #expect(after - stored >= .seconds(1))
        #expect(try HelperRun.line(["keyring-load", cache.prefix + "expiring"]) == "absent")
    }

    @Test func readableByThisUserFromAnotherSessionKeyringOnly() throws {
        let key = SecureBytes.random(count: 32)
        try cache.store(key, name: "shared", timeout: .seconds(60))
        // `keyctl session -`: the helper runs in a new anonymous session keyring, so it does not
        // possess the key; the user permission (0x3f0b0000) lets it read.
        let other = try SoftwareTPM.run("/usr/bin/keyctl", ["session", "-", BuiltProducts.tpmHelper.path, "keyring-load", cache.prefix + "shared"], environment: [:])
        #expect(other.trimmingCharacters(in: .whitespacesAndNewlines) == "found \(HelperRun.fingerprint(key))")

        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        // nobody: its own user keyring has no such key, and the key's id is unreadable to it.
        #expect(try HelperRun.line(["keyring-load", cache.prefix + "shared"], asNobody: true) == "absent")
        let id = try #require(try KernelKeyring.search(description: cache.prefix + "shared"))
        let direct = try HelperRun.line(["keyring-read-id", "\(id)"], asNobody: true)
        #expect(direct.hasPrefix("error permission denied"), "\(direct)")
    }

    @Test func badArgumentsAreRefused() {
        let key = SecureBytes.random(count: 32)
        for (name, timeout, bytes) in [
            ("x", Duration.zero, key), ("x", .seconds(-1), key), ("x", KernelKeyCache.maximumTimeout + .seconds(1), key),
            ("", .seconds(1), key), ("a\u{0}b", .seconds(1), key), ("x", .seconds(1), SecureBytes(count: 0)),
            (String(repeating: "n", count: 5000), .seconds(1), key),
        ] {
            #expect {
                try self.cache.store(bytes, name: name, timeout: timeout)
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
        }
    }

    /// 50 ms: the kernel's expiry has a one-second granularity; polling it is the observation.
    private func waitBriefly() throws {
        var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
        nanosleep(&pause, nil)
    }
}
