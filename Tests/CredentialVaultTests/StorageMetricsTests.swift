#if Metrics
import CredentialVaultTestSupport
import Foundation
import MetricsTestKit
import Testing

@testable import CredentialVault

/// What the sealed file counts (docs/API.md, "Metrics"), each test into a swift-metrics test
/// backend of its own (`MetricsSystem.bootstrap` is process-wide and once only; the
/// configuration's factory keeps parallel tests apart).
@Suite(.ownThread) final class StorageMetricsTests {
    let dir = TempDirectory()
    let metrics = TestMetrics()
    let key = CredentialKey(service: "payroll.internal.example", account: "svc-ledger-writer")
    let value = Data("value-that-is-never-counted".utf8)

    private func configuration(lockTimeout: Duration = .seconds(120), rollbackCounter: Bool? = nil) -> SealedFileConfiguration {
        var configuration = TestVault.configuration(dir, lockTimeout: lockTimeout)
        configuration.metrics = VaultMetrics(factory: metrics)
        configuration.rollbackCounter = rollbackCounter
        return configuration
    }

    private func create(_ name: String = "vault/test.cvault", rollbackCounter: Bool? = nil) throws -> SealedFileStore {
        try SealedFileStore.create(
            at: dir.path(name), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: configuration(rollbackCounter: rollbackCounter))
    }

    /// No metric has a dimension that shows the credential's names, its value or a path.
    private func expectNoCredentialInTheDimensions() {
        let keys = metrics.counters.map(\.dimensions) + metrics.timers.map(\.dimensions)
        for (name, value) in keys.flatMap({ $0 }) {
            for secret in [key.service, key.account, String(decoding: self.value, as: UTF8.self), dir.url.path] {
                #expect(!name.contains(secret) && !value.contains(secret), "\(name)=\(value)")
            }
        }
    }

    @Test("routine writes count nothing (a write may still wait a moment for the one before it: timed, as acquired)")
    func quietWhenNothingHappens() throws {
        let store = try create()
        try store.save(value, for: key, options: .portable)
        #expect(try store.load(key) == value)
        #expect(metrics.counters.isEmpty, "\(metrics.counters.map(\.label))")
        #expect(metrics.timers.allSatisfy { $0.label == "credential_vault_lock_wait_seconds" && $0.dimensions.contains { $0 == ("outcome", "acquired") } })
    }

    @Test("a vault file that fails its authentication counts one tamper detection")
    func tamperingIsCounted() throws {
        let a = try create("a/v.cvault")
        let b = try create("b/v.cvault")
        try a.save(Data("AAAA".utf8), for: key, options: .portable)
        try b.save(Data("BBBB".utf8), for: key, options: .portable)
        try TestVault.graftCommits(of: b.url, into: a.url)
        #expect(throws: CredentialVaultError.tampered) {
            _ = try SealedFileStore.open(at: a.url, secret: .passphrase(TestVault.passphrase), configuration: self.configuration())
        }
        let detections = try metrics.expectCounter("credential_vault_tamper_detections_total", [("backend", "file"), ("kind", "tampered")])
        #expect(detections.totalValue == 1)
        #expect(throws: (any Error).self) { try self.metrics.expectCounter("credential_vault_rollback_refusals_total", [("backend", "file")]) }
        expectNoCredentialInTheDimensions()
    }

    @Test("an older copy put back counts one rollback refusal")
    func rollbackIsCounted() throws {
        let store = try create(rollbackCounter: true)
        try TestVault.openOlderCopy(of: store, value, for: key, configuration: configuration())
        #expect(try metrics.expectCounter("credential_vault_rollback_refusals_total", [("backend", "file")]).totalValue == 1)
        expectNoCredentialInTheDimensions()
    }

    @Test("a write that waits for another process's lock records its wait once, as acquired")
    func lockWaitIsTimed() async throws {
        let store = try create()
        let holder = try HelperProcess(["hold-lock", store.url.path, "300"], environment: [:])
        defer { holder.kill() }
        try holder.waitForLine(startingWith: "locked")
        let refused = Arrivals()
        VaultLock.observeRefusedAttempts(at: store.location.path) { refused.arrive() }
        defer { VaultLock.stopObservingRefusedAttempts(at: store.location.path) }
        let (key, value) = (self.key, self.value)
        let save = Task { try await store.save(value, for: key, options: .portable) }
        #expect(await refused.reached(1), "the save found the lock held")
        holder.kill()  // its lock goes with it
        try await withCeiling(.seconds(60), "the save after the holder ended") { try await save.value }
        let waits = try metrics.expectTimer("credential_vault_lock_wait_seconds", [("backend", "file"), ("outcome", "acquired")])
        #expect(waits.values.count == 1 && waits.values[0] > 0, "\(waits.values)")
        #expect(throws: (any Error).self) { try self.metrics.expectCounter("credential_vault_lock_timeouts_total", [("backend", "file")]) }
        expectNoCredentialInTheDimensions()
    }

    @Test("a write that gives up waiting (busy) counts a lock timeout and times the wait as busy")
    func busyIsCounted() throws {
        let store = try SealedFileStore.open(
            at: try create().url, secret: .passphrase(TestVault.passphrase), configuration: configuration(lockTimeout: .milliseconds(300)))
        let held = try VaultLock.acquire(store.location, timeout: .seconds(60))
        defer { held.release() }
        #expect(throws: CredentialVaultError.busy) { try store.save(self.value, for: self.key, options: .portable) }
        #expect(try metrics.expectCounter("credential_vault_lock_timeouts_total", [("backend", "file")]).totalValue == 1)
        let waits = try metrics.expectTimer("credential_vault_lock_wait_seconds", [("backend", "file"), ("outcome", "busy")])
        #expect(waits.values.count == 1)
        expectNoCredentialInTheDimensions()
    }
}
#endif
