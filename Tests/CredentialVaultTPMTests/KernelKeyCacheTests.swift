import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The unlocked-key cache in the real kernel keyring: stored, read back, replaced, removed;
/// expired by the kernel; readable by this uid from another session keyring; not by nobody.
@Suite(.ownThread)
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

    /// The kernel removes the key at its timeout: readable right after the store (a 3 s
    /// timeout, which the kernel counts in whole seconds: at least 2 s of it left), then gone.
    /// The kernel's timer is the event waited for (its clock cannot be injected): polled, with a
    /// ceiling many times the timeout that only says it fires at all; nothing here is timed.
    @Test func theKernelExpiresTheKey() async throws {
        let key = SecureBytes.random(count: 32)
        try cache.store(key, name: "expiring", timeout: .seconds(3))
        #expect(try cache.load(name: "expiring")?.constantTimeEquals(key) == true)
        let cache = cache
        try await withCeiling(.seconds(120), "the kernel expiring a 3 s key") {
            while try cache.load(name: "expiring") != nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(try HelperRun.line(["keyring-load", cache.prefix + "expiring"]) == "absent")
    }

    @Test func readableByThisUserFromAnotherSessionKeyringOnly() async throws {
        try await offThePool {
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
}
