import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The review of the resolver and the Secret Service's namespaces (issue 13): each test states a
/// promise the first version broke.
@Suite(.serialized)
struct ResolverReviewTests {
    /// Issue 13 part 3: "the same save(key:) lands under two service names depending on the
    /// backend". A resolver given a Secret Service configuration with its own default service
    /// still gives the sealed file (and nothing else) the application's.
    @Test func explicitDefaultServiceReachesEveryBackend() throws {
        let app = try ApplicationIdentifier("org.example.App")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cv-resolver-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let resolver = BackendResolver(
            application: app, environment: [:], secretService: SecretServiceConfiguration(defaultService: "org.example.Desktop"),
            sealedFileURL: dir.appendingPathComponent("v/credentials.cvault"),
            sealedFile: SealedFileConfiguration(device: DeviceIdentity(hostSecretURL: dir.appendingPathComponent("host/secret"), machineID: "m")))
        #expect(resolver.defaultService == "org.example.Desktop")
        #expect(try resolver.open(.file).store.defaultService == "org.example.Desktop", "the sealed file too")
        #expect(try resolver.open(.memory).store.defaultService == "org.example.Desktop")
        #expect(try resolver.open(.secretService).store.defaultService == "org.example.Desktop")
    }
}

/// A long timeout ("practically none") must not trap (`Deadline` bounds it to a year).
@Suite struct DeadlineBoundTests {
    @Test func hugeTimeoutDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            let store = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: .seconds(10_000_000_000)))
            _ = try? store.status()
        }
    }
}

/// A huge ephemeral TTL is `invalidArgument`, never a trap (it used to reach `ExpiryStamp.encode`).
@Suite struct EphemeralTTLBoundTests {
    @Test func hugeEphemeralTTLDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            let store = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: .milliseconds(200)))
            _ = try? store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "a"), options: .ephemeral(ttl: .seconds(Int64.max)))
        }
    }
}

/// The expiry sweep deletes only the sweeping store's own expired items: application B (a clock
/// an hour ahead) used to purge application A's still-valid ephemeral credential.
@Suite(.privateKeyring, .serialized)
struct NamespaceSweepTests {
    @Test func anotherApplicationsSweepLeavesMyEphemeralItem() throws {
        let prefix = "cvtest-\(UUID().uuidString.prefix(8))/"
        let a = SecretServiceStore(
            configuration: SecretServiceConfiguration(application: try ApplicationIdentifier("org.example.A"), serviceNamePrefix: prefix))
        let clock = ManualClock(start: Date().addingTimeInterval(3600))
        let b = SecretServiceStore(
            configuration: SecretServiceConfiguration(
                application: try ApplicationIdentifier("org.example.B"), serviceNamePrefix: prefix, clock: clock))
        defer { _ = try? a.deleteAll(); _ = try? b.deleteAll() }
        let key = CredentialKey(service: "svc", account: "acct")
        try a.save(Data("a-nonce".utf8), for: key, options: .ephemeral(ttl: .seconds(600)))
        try b.save(Data("b".utf8), for: CredentialKey(service: "other", account: "acct"), options: .ephemeral(ttl: .seconds(1)))
        clock.advance(by: .seconds(2))
        _ = try b.delete(CredentialKey(service: "unrelated", account: "acct"))  // b's own item expired: b sweeps
        let after = try a.take(key).map { String(decoding: $0, as: UTF8.self) }
        print("NamespaceSweepTests: A takes \(String(describing: after))")
        #expect(after == "a-nonce")
    }
}

/// The TTL bound of every backend: more than a year is `invalidArgument`.
@Suite struct EphemeralTTLValidationTests {
    @Test func aTTLOverAYearIsRefused() {
        #expect(throws: CredentialVaultError.self) { try StorageOptions.ephemeral(ttl: .seconds(Int64.max)).validate() }
        #expect(throws: CredentialVaultError.self) { try StorageOptions.ephemeral(ttl: Lifetime.longestEphemeralTTL + .seconds(1)).validate() }
        #expect(throws: Never.self) { try StorageOptions.ephemeral(ttl: Lifetime.longestEphemeralTTL).validate() }
    }
}
