import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultSecretService
import Foundation
import Synchronization
import Testing

/// `take`, and ephemeral credentials in the `session` collection.
@Suite(.ownThread, .privateKeyring)
struct TakeAndEphemeralTests {
    @Test func takeReturnsTheValueOnce() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "oauth", account: "state-1")
        #expect(try fixture.store.take(key) == nil)
        for options in [StorageOptions.default, .ephemeral()] {
            try fixture.store.save(Data("verifier".utf8), for: key, options: options)
            #expect(try fixture.store.take(key) == Data("verifier".utf8))
            #expect(try fixture.store.take(key) == nil)
            #expect(try fixture.store.load(key) == nil)
        }
    }

    @Test func racingTakersGetTheValueAtMostOnce() async throws {
        let fixture = IsolatedSecretServiceStore()
        // The synchronous API, called from tasks (in async code the async overloads would be picked).
        let store = fixture.store.synchronous
        for round in 0..<5 {
            let key = CredentialKey(service: "race", account: "round-\(round)")
            try store.save(Data("once".utf8), for: key, options: .ephemeral())
            let winners = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        if try store.take(key) != nil { winners.increment() }
                    }
                }
                try await group.waitForAll()
            }
            #expect(winners.value == 1, "round \(round)")
        }
    }

    @Test func ephemeralExpiresOnTheInjectedClock() throws {
        let clock = ManualClock()
        let fixture = IsolatedSecretServiceStore(clock: clock)
        let key = CredentialKey(service: "oauth", account: "nonce")
        try fixture.store.save(Data("n-1".utf8), for: key, options: .ephemeral(ttl: .seconds(60)))
        clock.advance(by: .seconds(59))
        #expect(try fixture.store.load(key) == Data("n-1".utf8))
        clock.advance(by: .seconds(2))
        #expect(throws: CredentialVaultError.expired) { try fixture.store.load(key) }
        // Purged by the failed load.
        #expect(try fixture.store.load(key) == nil)

        try fixture.store.save(Data("n-2".utf8), for: key, options: .ephemeral(ttl: .seconds(10)))
        clock.advance(by: .seconds(11))
        #expect(throws: CredentialVaultError.expired) { try fixture.store.take(key) }
        #expect(try fixture.store.take(key) == nil)
    }

    @Test func expiredEphemeralIsPurgedOnTheNextWrite() throws {
        let clock = ManualClock()
        let fixture = IsolatedSecretServiceStore(clock: clock)
        let key = CredentialKey(service: "oauth", account: "old-state")
        try fixture.store.save(Data("s".utf8), for: key, options: .ephemeral(ttl: .seconds(5)))
        clock.advance(by: .seconds(6))
        try fixture.store.save(Data("other".utf8), for: CredentialKey(service: "oauth", account: "unrelated"))
        // A store on the real clock would still consider the item alive: it must be gone from the keyring.
        let realTime = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: TestEnvironment.timeout, serviceNamePrefix: fixture.prefix))
        #expect(try realTime.load(key) == nil)
    }

    @Test func ephemeralReplacesAndIsReplacedByPersistent() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        try fixture.store.save(Data("persistent".utf8), for: key)
        try fixture.store.save(Data("ephemeral".utf8), for: key, options: .ephemeral())
        #expect(try fixture.store.load(key) == Data("ephemeral".utf8))
        #expect(try fixture.store.listKeys() == [])
        try fixture.store.save(Data("persistent again".utf8), for: key)
        #expect(try fixture.store.metadata(for: key)?.isEphemeral == false)
        #expect(try fixture.store.take(key) == Data("persistent again".utf8))
        #expect(try fixture.store.load(key) == nil)
    }

    @Test func ephemeralSurvivesARestartOfTheProcess() async throws {
        try await offThePool {
            // A custom-scheme redirect starts a new process: it must find the pending flow's state.
            let service = "cvtest-restart-\(UUID().uuidString.prefix(8))"
            let store = TestEnvironment.unscopedStore()
            let key = CredentialKey(service: service, account: "acct")
            defer { _ = try? store.deleteAll(service: service) }
            try store.save(Data("probe-secret".utf8), for: key, options: .ephemeral())
            let hex = Data("probe-secret".utf8).map { String(format: "%02x", $0) }.joined()
            let steps = try runProbe(busMode: nil, timeoutMilliseconds: TestEnvironment.timeoutMilliseconds, ["load:\(service):acct", "take:\(service):acct", "take:\(service):acct"])
            #expect(steps.map(\.outcome) == ["value:\(hex)", "value:\(hex)", "nil"])
            #expect(try store.load(key) == nil)
        }
    }
}

/// A thread-safe counter for the racing tasks.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
