import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultSecretService

/// The wait for unlock on scripted answers (the real keyring cannot be unlocked without a
/// prompt in the test buses; its locked, unlocked and absent states are in ResolverKeyringStateTests).
@Suite(.ownThread) struct UnlockWaitTests {
    static let locked = KeyringProbe.locked(SecretServiceStatus(isLocked: true, collectionLabel: "Login", collectionPath: "/c"))
    static let unlocked = KeyringProbe.unlocked(SecretServiceStatus(isLocked: false, collectionLabel: "Login", collectionPath: "/c"))
    /// A timeout no test waits for: the waits end on their answers (or cancellation) alone.
    static let unreachable = Duration.seconds(3600)

    @Test func asksAgainUntilUnlocked() async throws {
        let answers = Mutex([Self.locked, Self.locked, Self.unlocked])
        let wait = UnlockWait(timeout: Self.unreachable, interval: .milliseconds(20))
        let result = try await wait.run(after: Self.locked) { () async throws(CredentialVaultError) in
            answers.withLock { $0.removeFirst() }
        }
        #expect(!result.isLocked)
        #expect(answers.withLock { $0.isEmpty })
        let sync = Mutex([Self.locked, Self.unlocked])
        #expect(!UnlockWait(timeout: Self.unreachable, interval: .milliseconds(20)).run(after: Self.locked) { sync.withLock { $0.removeFirst() } }.isLocked)
    }

    /// Still locked at the timeout: the last answer, `locked`, after at least the timeout (a
    /// deadline is never early; the ceiling only says that the wait ended).
    @Test func endsAtTheTimeoutStillLocked() async throws {
        let timeout = Duration.milliseconds(300)
        let started = ContinuousClock.now
        let result = try await withCeiling(.seconds(120), "an unlock wait with a 300 ms timeout") {
            try await UnlockWait(timeout: timeout, interval: .milliseconds(200)).run(after: Self.locked) {
                () async throws(CredentialVaultError) in Self.locked
            }
        }
        #expect(result.isLocked)
        #expect(started.duration(to: .now) >= timeout, "it waited for its timeout")
        #expect(throws: CredentialVaultError.locked) { try result.unlockedStatus() }
    }

    @Test func anUnlockedOrAbsentServiceEndsTheWaitAtOnce() {
        let wait = UnlockWait(timeout: Self.unreachable, interval: .milliseconds(100))
        #expect(wait.pause(after: Self.unlocked) == nil)
        #expect(wait.pause(after: .unavailable(.notAvailable("no bus"))) == nil)
        #expect(wait.pause(after: Self.locked) == .milliseconds(100))
    }

    /// Cancelled while it keeps asking a keyring that stays locked, the wait throws `cancelled`
    /// long before its timeout.
    @Test func cancellingTheWaitEndsIt() async throws {
        let asked = Arrivals()
        let task = Task { () async throws(CredentialVaultError) -> KeyringProbe in
            try await UnlockWait(timeout: Self.unreachable, interval: .milliseconds(10)).run(after: Self.locked) {
                () async throws(CredentialVaultError) in
                asked.arrive()
                return Self.locked
            }
        }
        #expect(await asked.reached(2), "the wait is asking again")
        task.cancel()
        let result = try await withCeiling(.seconds(120), "a cancelled unlock wait with an hour's timeout") { await task.result }
        guard case .failure(let error) = result, error as? CredentialVaultError == .cancelled else {
            Issue.record("not cancelled: \(result)")
            return
        }
    }
}
