import CredentialVaultTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import CredentialVault

/// What the sealed file tells the logger it is given: its decisions and the refusals an
/// operator must hear of, each naming the vault file and never a credential (no value, no
/// service or account name: names are sealed in the file like the values).
@Suite(.ownThread) final class StorageLoggingTests {
    let dir = TempDirectory()
    let capture = LogCapture()
    /// Names and a value no log line may show.
    let key = CredentialKey(service: "payroll.internal.example", account: "svc-ledger-writer")
    let value = Data("value-that-is-never-logged".utf8)

    private func configuration(lockTimeout: Duration = .seconds(120), rollbackCounter: Bool? = nil) -> SealedFileConfiguration {
        var configuration = TestVault.configuration(dir, lockTimeout: lockTimeout)
        configuration.logger = capture.logger()
        configuration.lockWaitLogThreshold = .zero
        configuration.rollbackCounter = rollbackCounter
        return configuration
    }

    private func create(_ name: String = "vault/test.cvault", rollbackCounter: Bool? = nil) throws -> SealedFileStore {
        try SealedFileStore.create(
            at: dir.path(name), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: configuration(rollbackCounter: rollbackCounter))
    }

    /// No record shows the credential's names or value.
    private func expectNoCredentialInTheLog() {
        for secret in [key.service, key.account, String(decoding: value, as: UTF8.self), TestVault.passphrase] {
            #expect(!capture.text.contains(secret), "\(capture.text)")
        }
    }

    /// Puts another vault's commit records, snapshot and journal (its MACs included) in
    /// `store`'s file: a file that fails its authentication.
    private func tamper(_ store: SealedFileStore) throws {
        let other = try create("other/v.cvault")
        try store.save(Data("AAAA".utf8), for: key, options: .portable)
        try other.save(Data("BBBB".utf8), for: key, options: .portable)
        try TestVault.graftCommits(of: other.url, into: store.url)
    }

    private func entries(containing text: String) -> [LogCapture.Entry] { capture.entries.filter { $0.message.contains(text) } }

    @Test("routine writes log nothing (waits below the threshold included)")
    func quietWhenNothingHappens() throws {
        // Not zero here: a write may wait a moment for the one before it (its durability work).
        var configuration = configuration()
        configuration.lockWaitLogThreshold = .seconds(3600)
        let store = try SealedFileStore.create(
            at: dir.path("vault/test.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: configuration)
        try store.save(value, for: key, options: .portable)
        #expect(try store.load(key) == value)
        _ = try store.delete(key)
        #expect(capture.entries.isEmpty, "\(capture.text)")
    }

    @Test("a write that waits for another holder's lock logs the wait and its end, with the vault's path")
    func lockWaitIsLogged() async throws {
        let store = try create()
        let held = try await VaultLock.acquire(store.location, timeout: .seconds(60))
        // Observed from now on: only the save's attempts (not this test's own above).
        let refused = Arrivals()
        VaultLock.observeRefusedAttempts(at: store.location.path) { refused.arrive() }
        defer { VaultLock.stopObservingRefusedAttempts(at: store.location.path) }
        let (key, value) = (self.key, self.value)
        let save = Task { try await store.save(value, for: key, options: .portable) }
        #expect(await refused.reached(1), "the save found the lock held")
        held.release()
        try await withCeiling(.seconds(60), "the save after the release") { try await save.value }
        let waiting = try #require(entries(containing: "waiting for the vault's lock").first, "\(capture.text)")
        #expect(waiting.level == .info && waiting.metadata["vault"] == store.url.path)
        #expect(entries(containing: "took the vault's lock after waiting").map(\.level) == [.info], "\(capture.text)")
        expectNoCredentialInTheLog()
    }

    @Test("a write that gives up waiting (busy) logs it at warning")
    func busyIsLogged() throws {
        let store = try SealedFileStore.open(
            at: try create().url, secret: .passphrase(TestVault.passphrase), configuration: configuration(lockTimeout: .milliseconds(300)))
        let held = try VaultLock.acquire(store.location, timeout: .seconds(60))
        defer { held.release() }
        #expect(throws: CredentialVaultError.busy) { try store.save(self.value, for: self.key, options: .portable) }
        let gaveUp = try #require(entries(containing: "gave up waiting for the vault's lock").first, "\(capture.text)")
        #expect(gaveUp.level == .warning && gaveUp.metadata["vault"] == store.url.path)
        expectNoCredentialInTheLog()
    }

    @Test("a vault file that fails its authentication is refused and logged at warning")
    func tamperingIsLogged() throws {
        let a = try create("a/v.cvault")
        try tamper(a)
        #expect(throws: CredentialVaultError.tampered) {
            _ = try SealedFileStore.open(at: a.url, secret: .passphrase(TestVault.passphrase), configuration: self.configuration())
        }
        let refusal = try #require(entries(containing: "failed its authentication").first, "\(capture.text)")
        #expect(refusal.level == .warning && refusal.metadata["vault"] == a.url.path)
        expectNoCredentialInTheLog()
    }

    @Test("an older copy put back is refused and logged; accepting it as a restore is logged too")
    func rollbackAndRestoreAreLogged() throws {
        let store = try create(rollbackCounter: true)
        try TestVault.openOlderCopy(of: store, value, for: key, configuration: configuration())
        let refusal = try #require(entries(containing: "an older copy of the vault was refused").first, "\(capture.text)")
        #expect(refusal.level == .warning && refusal.metadata["vault"] == store.url.path)
        _ = try SealedFileStore.acceptRestore(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: configuration())
        let accepted = try #require(entries(containing: "a restored copy was accepted as the vault").first, "\(capture.text)")
        #expect(accepted.level == .info && accepted.metadata["vault"] == store.url.path)
        expectNoCredentialInTheLog()
    }

    @Test("a custody change is logged with both custodians and the counter")
    func custodyChangeIsLogged() throws {
        let store = try create()
        try store.save(value, for: key, options: .default)
        try store.changeCustody(to: .file, secret: .passphrase(TestVault.passphrase), rollbackCounter: true)
        #expect(store.hasRollbackCounter)
        let moved = try #require(entries(containing: "custody moved").first, "\(capture.text)")
        #expect(moved.level == .info && moved.message.contains("from file to file, with a rollback counter"), "\(moved.message)")
        #expect(moved.metadata["vault"] == store.url.path)
        expectNoCredentialInTheLog()
    }

    @Test("a log handler slow to return holds up no other call on the store (a refusal is logged outside the store's lock)")
    func slowHandlerHoldsUpNoOtherCall() throws {
        let held = HeldLogHandler.Hold()
        var configuration = configuration()
        configuration.lockWaitLogThreshold = .seconds(3600)
        configuration.logger = Logger(label: "held", factory: { _ in HeldLogHandler(hold: held) })
        let a = try SealedFileStore.create(
            at: dir.path("a/v.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: configuration)
        try tamper(a)  // under the open store
        let key = self.key
        let first = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? a.load(key)
            first.signal()
        }
        defer {
            held.release.signal()
            _ = first.wait(timeout: .now() + 60)
        }
        try #require(held.entered.wait(timeout: .now() + 60) == .success, "the refusal reached the handler")
        // The handler holds the first call's refusal: another call on the store must not wait for it.
        let second = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? a.listKeys(service: nil)
            second.signal()
        }
        #expect(second.wait(timeout: .now() + 30) == .success, "another call on the store waited for the log handler")
    }

    @Test("silent by default: a configuration given no logger has swift-log's no-op handler")
    func silentByDefault() {
        #expect(SealedFileConfiguration().logger.handler is SwiftLogNoOpLogHandler)
        #expect(SealedFileConfiguration().lockWaitLogThreshold == .seconds(1))
    }
}

/// A log handler that holds the first warning it gets until the test releases it (an
/// application's handler that is slow to return: a full pipe, a remote sink).
private struct HeldLogHandler: LogHandler {
    final class Hold: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = Mutex(true)
    }

    let hold: Hold
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level == .warning, hold.first.withLock({ first in defer { first = false }; return first }) else { return }
        hold.entered.signal()
        _ = hold.release.wait(timeout: .now() + 120)
    }
}
