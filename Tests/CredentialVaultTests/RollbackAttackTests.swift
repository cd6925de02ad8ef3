import CredentialVaultTesting
import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Attacks on rollback detection with the host-secret file custodian and its counter files:
/// each test is a promise of docs/FORMAT.md *Rollback counter* / docs/THREAT-MODEL.md *Key custody
/// and rollback* that an older copy put back (or a failure) must not break.
@Suite(.ownThread) final class RollbackAttackTests {
    let dir = TempDirectory()

    private func configuration(lockTimeout: Duration = .seconds(10)) -> SealedFileConfiguration {
        var configuration = TestVault.configuration(dir, lockTimeout: lockTimeout)
        configuration.rollbackCounter = true
        return configuration
    }

    private var countersDirectory: URL {
        TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent().appendingPathComponent("counters")
    }

    private func counterFile(_ store: SealedFileStore) -> URL {
        let (id, reference) = store.state.withLock { ($0.contents.header.vaultID, $0.contents.journal.counter.reference) }
        return countersDirectory.appendingPathComponent(HostFileCustodian.name(id, reference: reference))
    }

    private func counter(_ store: SealedFileStore) throws -> UInt64? {
        guard let data = FileManager.default.contents(atPath: counterFile(store).path) else { return nil }
        return data.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return reader.u64()
        }
    }

    private func make(_ name: String, configuration: SealedFileConfiguration) throws -> SealedFileStore {
        try SealedFileStore.create(
            at: dir.path("\(name)/v.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: configuration)
    }

    private func open(_ url: URL, _ configuration: SealedFileConfiguration) throws -> SealedFileStore {
        try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: configuration)
    }

    /// In place, same inode, as `cp` does.
    static func writeInPlace(_ data: Data, to url: URL) throws { try CustodySuite.writeInPlaceForTests(data, to: url) }

    private func expectRolledBack(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        CustodySuite.expectRolledBack(what, sourceLocation: sourceLocation, body)
    }

    static let token = CredentialKey(service: "s", account: "token")

    /// A store open all along, that did not see the newest writes of another process, catches up
    /// (in place, on the same inode: `cp`) to an older copy lying between its state and the
    /// newest: the catch-up path never asks the custodian, so a deleted token comes back.
    @Test func aLongLivedStoreNeverCatchesUpToAnOlderCopy() throws {
        let configuration = configuration()
        let created = try make("catch-up", configuration: configuration)
        let longLived = try open(created.url, configuration)
        #expect(try longLived.load(Self.token) == nil)
        let writer = try open(created.url, configuration)
        try writer.save(Data("revoked".utf8), for: Self.token, options: .portable)
        let older = try Data(contentsOf: created.url)
        #expect(try writer.delete(Self.token))
        #expect(try counter(writer) == 2)
        try Self.writeInPlace(older, to: created.url)  // counter 1 in the file, 2 at the custodian
        expectRolledBack("a fresh open of the older copy") { _ = try self.open(created.url, configuration) }
        expectRolledBack("the long-lived store's load through the catch-up") { _ = try longLived.load(Self.token) }
        expectRolledBack("the long-lived store's listing") { _ = try longLived.listKeys() }
        // After its refused write, still never the older state from memory.
        expectRolledBack("a write") { try longLived.save(Data("x".utf8), for: CredentialKey(service: "s", account: "x"), options: .portable) }
        expectRolledBack("the load after the refused write") { _ = try longLived.load(Self.token) }
    }

    /// The async API's cached path and catch-up: the same promise.
    @Test func theAsyncAPINeverCatchesUpToAnOlderCopy() async throws {
        let configuration = configuration()
        let created = try make("catch-up-async", configuration: configuration)
        let longLived = try open(created.url, configuration)
        #expect(try await longLived.load(Self.token) == nil)
        let writer = try open(created.url, configuration)
        try await writer.save(Data("revoked".utf8), for: Self.token, options: .portable)
        let older = try Data(contentsOf: created.url)
        let deleted = try await writer.delete(Self.token)
        #expect(deleted)
        try Self.writeInPlace(older, to: created.url)
        var answer: Result<Data?, CredentialVaultError>
        do throws(CredentialVaultError) {
            answer = .success(try await longLived.load(Self.token))
        } catch {
            answer = .failure(error)
        }
        switch answer {
        case .failure(.rolledBack): break
        case .failure(let error): Issue.record("expected rolledBack, got \(error)")
        case .success(let value): Issue.record("the async load of an older copy answered \(value.map { String(decoding: $0, as: UTF8.self) } ?? "nil")")
        }
    }

    /// A custody change that fails (here: the vault lock is busy) must leave the vault as it
    /// was. Moving to the same custodian (a re-wrap, `credvault custody file` again) gets the
    /// live counter back from `createCounter`, and the failure path removes it: the vault then
    /// refuses itself (`rolledBack`, counter missing) until `accept-restore`.
    @Test func aFailedCustodyChangeKeepsTheLiveCounter() throws {
        let store = try make("failed-move", configuration: configuration(lockTimeout: .milliseconds(50)))
        try store.save(Data("v".utf8), for: Self.token, options: .portable)
        let holder = try VaultLock.acquire(store.location, timeout: .seconds(5))
        #expect(throws: CredentialVaultError.busy) {
            try store.changeCustody(to: .file, secret: .passphrase(TestVault.passphrase), rollbackCounter: true)
        }
        holder.release()
        #expect(try counter(store) != nil, "the live counter survived the failed change")
        #expect(try open(store.url, configuration()).load(Self.token) == Data("v".utf8))
    }

    /// Counters must never restart for a vault: moving away from a custodian removes the
    /// counter, moving back makes it again at 0, and an old copy whose counter the new one
    /// reaches again (a few saves later) opens as current.
    @Test func aCounterMadeAgainNeverAcceptsAnOldCopy() throws {
        let store = try make("restart", configuration: configuration())
        for i in 0..<3 { try store.save(Data("v\(i)".utf8), for: Self.token, options: .portable) }
        let old = try Data(contentsOf: store.url)
        let oldValue = try #require(try counter(store))
        try store.save(Data("new".utf8), for: Self.token, options: .portable)
        let key = VaultSecret.passphrase(TestVault.passphrase)
        try store.changeCustody(to: .file, secret: key, rollbackCounter: false)  // the counter is removed
        try store.changeCustody(to: .file, secret: key, rollbackCounter: true)  // and made again
        var saves = 0
        while try counter(store)! < oldValue && saves < 10 {
            try store.save(Data("newer \(saves)".utf8), for: CredentialKey(service: "s", account: "other"), options: .portable)
            saves += 1
        }
        #expect(try counter(store) == oldValue)
        try Self.writeInPlace(old, to: store.url)
        expectRolledBack("an old copy whose counter value came round again") {
            let reopened = try self.open(store.url, self.configuration())
            Issue.record("it reads \(String(decoding: try reopened.load(Self.token) ?? Data(), as: UTF8.self))")
        }
    }

    /// A vault made without a counter holding `token` ("revoked"), moved to file custody with a
    /// counter, changed by `after`, then replaced in place by its copy from before the move.
    private func vaultMovedToACounter(_ name: String, after: (SealedFileStore) throws -> Void = { _ in }) throws -> SealedFileStore {
        var plain = TestVault.configuration(dir)
        plain.rollbackCounter = false
        let store = try make(name, configuration: plain)
        try store.save(Data("revoked".utf8), for: Self.token, options: .portable)
        let preMove = try Data(contentsOf: store.url)
        try store.changeCustody(to: .file, secret: .passphrase(TestVault.passphrase), rollbackCounter: true)
        try after(store)
        try Self.writeInPlace(preMove, to: store.url)
        return store
    }

    /// A vault moved to rollback protection: its copies from before the move (no counter)
    /// would otherwise open without a word under the old, weaker protection.
    @Test func aCopyFromBeforeTheCounterIsRefused() throws {
        let store = try vaultMovedToACounter("pre-move") { store in _ = try #require(try store.delete(Self.token)) }
        #expect(store.hasRollbackCounter)
        expectRolledBack("a copy from before the vault got its counter") {
            let reopened = try self.open(store.url, self.configuration())
            Issue.record("it reads \(String(decoding: try reopened.load(Self.token) ?? Data(), as: UTF8.self)), format \(reopened.formatVersion)")
        }
        // A deliberate restore of that copy is accepted, and it then opens as it was.
        let accepted = try SealedFileStore.acceptRestore(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: configuration())
        #expect(try accepted.load(Self.token) == Data("revoked".utf8))
        #expect(try !open(store.url, configuration()).hasRollbackCounter, "as it was: without a counter")
    }

    /// The mark that refuses a copy from before the counter is looked for in a counters
    /// directory that must answer honestly: open to others, another user's or a symbolic link
    /// (here to a directory without the mark), it refuses the copy instead of answering "no
    /// mark" and opening it.
    @Test func aCountersDirectoryThatCannotBeTrustedRefusesACopyWithoutACounter() throws {
        let store = try vaultMovedToACounter("untrusted")
        let counters = countersDirectory.path
        let real = counters + "-real", empty = counters + "-empty"
        #expect(mkdir(empty, 0o700) == 0)
        let damages: [(String, () -> Void, () -> Void)] = [
            ("mode 0755", { chmod(counters, 0o755) }, { chmod(counters, 0o700) }),
            ("mode 0777", { chmod(counters, 0o777) }, { chmod(counters, 0o700) }),
            ("another user's", { chown(counters, 65534, 65534) }, { chown(counters, geteuid(), getegid()) }),
            ("a symbolic link", { rename(counters, real); symlink(empty, counters) }, { unlink(counters); rename(real, counters) }),
        ]
        for (damage, apply, undo) in damages {
            apply()
            do {
                let reopened = try open(store.url, configuration())
                Issue.record("with the counters directory \(damage), the copy opened (format \(reopened.formatVersion))")
            } catch CredentialVaultError.rolledBack, CredentialVaultError.permissionDenied {
            } catch {
                Issue.record("with the counters directory \(damage): \(error)")
            }
            undo()
        }
        expectRolledBack("the copy, with the counters directory as it was") { _ = try self.open(store.url, self.configuration()) }
    }

    /// A take whose delete is durable but whose counter cannot be advanced returns the value
    /// (it exists nowhere else: throwing lost it), through both APIs; the next write still
    /// needs the increment first.
    @Test(arguments: [false, true]) func aTakeWhoseCounterCannotAdvanceStillReturnsTheValue(async: Bool) async throws {
        let failing = FailingIncrements(real: HostFileCustodian(directory: TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent()))
        var configuration = configuration()
        configuration.custodians = [failing]
        let store = try make("taken", configuration: configuration)
        // (Local functions that are not async call the synchronous API.)
        func save(_ value: String) throws { try store.save(Data(value.utf8), for: Self.token, options: .portable) }
        func takeSynchronously() throws -> Data? { try store.take(Self.token) }
        func load() throws -> Data? { try store.load(Self.token) }
        try save("single-use")
        failing.refuses.withLock { $0 = true }
        let taken = async ? try await store.take(Self.token) : try takeSynchronously()
        #expect(taken == Data("single-use".utf8), "the taken value is returned")
        #expect(try load() == nil, "and deleted")
        expectThrows(\CredentialVaultError.isPermissionDenied, "the next write first needs the increment, which still fails") {
            try save("next")
        }
    }

    /// A save whose counter cannot be advanced (a counters directory made immutable, a keyring
    /// or TPM refusing) left the copy from before it openable, and reported success: an attacker
    /// who can also swap the file undid every write. The save now reports it, later saves are
    /// refused before writing until the counter can move, and then the copy is refused again.
    @Test func aSaveWhoseCounterCannotAdvanceIsReportedAndLaterSavesWait() throws {
        let failing = FailingIncrements(real: HostFileCustodian(directory: TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent()))
        var configuration = configuration()
        configuration.custodians = [failing]
        let store = try make("frozen", configuration: configuration)
        try store.save(Data("old".utf8), for: Self.token, options: .portable)
        let before = try Data(contentsOf: store.url)
        let counterBefore = try counter(store)

        failing.refuses.withLock { $0 = true }
        let error = #expect(throws: CredentialVaultError.self) {
            try store.save(Data("new".utf8), for: Self.token, options: .portable)
        }
        guard case .io(let message)? = error else {
            Issue.record("a save whose counter did not advance: \(String(describing: error))")
            return
        }
        #expect(message.contains("rollback counter could not be advanced"))
        #expect(try counter(store) == counterBefore)
        #expect(try store.load(Self.token) == Data("new".utf8), "the change itself is durable and adopted")
        let afterFailure = try Data(contentsOf: store.url)
        // The custodian's own refusal of the increment, passed on (not the save's io report).
        expectThrows(\CredentialVaultError.isPermissionDenied, "the next save first needs the increment, which still fails") {
            try store.save(Data("newer".utf8), for: Self.token, options: .portable)
        }
        #expect(try Data(contentsOf: store.url) == afterFailure, "and writes nothing")

        failing.refuses.withLock { $0 = false }
        try store.save(Data("newer".utf8), for: Self.token, options: .portable)
        try Self.writeInPlace(before, to: store.url)
        expectRolledBack("the copy from before the failed increment, once the counter moved") {
            _ = try self.open(store.url, configuration)
        }
    }

    /// `acceptRestore` promises that every other copy, the replaced one included, is refused
    /// from then on. A replaced copy one ahead of its counter (its increment interrupted) carries
    /// the very value the restore is rewritten with, and opens as current again.
    @Test func acceptRestoreRefusesTheReplacedCopyEvenOneAhead() throws {
        let configuration = configuration()
        let store = try make("accept", configuration: configuration)
        try store.save(Data("old".utf8), for: Self.token, options: .portable)
        let older = try Data(contentsOf: store.url)
        try store.save(Data("a".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        let before = try Data(contentsOf: counterFile(store))
        try store.save(Data("current".utf8), for: Self.token, options: .portable)
        try Self.writeInPlace(before, to: counterFile(store))  // the increment of that save interrupted
        let replaced = try Data(contentsOf: store.url)
        #expect(try open(store.url, configuration).load(Self.token) == Data("current".utf8))
        try Self.writeInPlace(older, to: store.url)
        expectRolledBack("the older copy") { _ = try self.open(store.url, configuration) }
        let restored = try SealedFileStore.acceptRestore(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: configuration)
        #expect(try restored.load(Self.token) == Data("old".utf8))
        try Self.writeInPlace(replaced, to: store.url)
        expectRolledBack("the copy the restore replaced") {
            let reopened = try self.open(store.url, configuration)
            Issue.record("it reads \(String(decoding: try reopened.load(Self.token) ?? Data(), as: UTF8.self))")
        }
    }

    /// `acceptRestore` on a vault that was not restored (its counter agrees) or has no counter
    /// accepted nothing, yet rewrote the file and reported success (`credvault accept-restore`:
    /// "accepted ... as restored"). It says so now, and changes nothing.
    @Test func acceptRestoreOnAVaultThatWasNotRestoredChangesNothing() throws {
        let configuration = configuration()
        let store = try make("healthy", configuration: configuration)
        try store.save(Data("v".utf8), for: Self.token, options: .portable)
        var plain = TestVault.configuration(dir)
        plain.rollbackCounter = false
        let uncountered = try make("uncountered", configuration: plain)
        for (url, configuration) in [(store.url, configuration), (uncountered.url, plain)] {
            let before = try Data(contentsOf: url)
            #expect {
                _ = try SealedFileStore.acceptRestore(at: url, secret: .passphrase(TestVault.passphrase), configuration: configuration)
            } throws: { error in
                guard case .invalidArgument(let why) = error as? CredentialVaultError else { return false }
                return why.contains("no restore to accept")
            }
            #expect(try Data(contentsOf: url) == before, "nothing was written")
        }
        #expect(try open(store.url, configuration).load(Self.token) == Data("v".utf8))
    }

    /// A store open on a vault with a counter, when an older copy from before the vault had one
    /// is put back: the store knows its vault has a counter, yet adopted the copy (its custody
    /// byte is the same, and only a file that has a counter was checked). Its writes were refused.
    @Test func aLongLivedStoreNeverAdoptsACopyWithoutItsCounter() throws {
        var plain = TestVault.configuration(dir)
        plain.rollbackCounter = false
        let store = try make("pre-move-long-lived", configuration: plain)
        try store.save(Data("revoked".utf8), for: Self.token, options: .portable)
        let preMove = try Data(contentsOf: store.url)
        try store.changeCustody(to: .file, secret: .passphrase(TestVault.passphrase), rollbackCounter: true)
        #expect(try store.delete(Self.token))
        try Self.writeInPlace(preMove, to: store.url)
        // The vault's custody changed under the store, which must be opened again.
        #expect(throws: CredentialVaultError.reopenRequired(.custodyChanged), "the load of a copy without the counter") {
            Issue.record("it read \(String(decoding: try store.load(Self.token) ?? Data("nothing".utf8), as: UTF8.self))")
        }
        #expect(throws: CredentialVaultError.reopenRequired(.custodyChanged), "the listing") { _ = try store.listKeys() }
    }
}

/// The host-file custodian whose increments fail while `refuses` is set: the injection of a
/// counter that cannot advance (an immutable counters directory, a keyring or TPM refusing).
final class FailingIncrements: DeviceCustodian {
    let real: HostFileCustodian
    let refuses = Mutex(false)

    init(real: HostFileCustodian) { self.real = real }

    var custody: DeviceCustody { .file }

    func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        try real.deviceSecret(binding: binding, create: create)
    }

    func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        try real.createCounter(vaultID: vaultID, binding: binding)
    }

    func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        try real.readCounter(vaultID: vaultID, reference: reference, binding: binding)
    }

    func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        if refuses.withLock({ $0 }) { throw .permissionDenied("the counters directory is immutable") }
        try real.incrementCounter(vaultID: vaultID, reference: reference, binding: binding)
    }

    func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        try real.removeCounter(vaultID: vaultID, reference: reference, binding: binding)
    }
}
