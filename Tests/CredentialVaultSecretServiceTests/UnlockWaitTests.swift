import CredentialVault
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultSecretService

/// The wait for unlock on scripted answers (the real keyring cannot be unlocked without a
/// prompt in the test buses; its locked, unlocked and absent states are in ResolverKeyringStateTests).
@Suite struct UnlockWaitTests {
    static let locked = KeyringProbe.locked(SecretServiceStatus(isLocked: true, collectionLabel: "Login", collectionPath: "/c"))
    static let unlocked = KeyringProbe.unlocked(SecretServiceStatus(isLocked: false, collectionLabel: "Login", collectionPath: "/c"))

    @Test func asksAgainUntilUnlocked() async throws {
        let answers = Mutex([Self.locked, Self.locked, Self.unlocked])
        let wait = UnlockWait(timeout: .seconds(5), interval: .milliseconds(20))
        let result = try await wait.run(after: Self.locked) { () async throws(CredentialVaultError) in
            answers.withLock { $0.removeFirst() }
        }
        #expect(!result.isLocked)
        #expect(answers.withLock { $0.isEmpty })
        let sync = Mutex([Self.locked, Self.unlocked])
        #expect(!UnlockWait(timeout: .seconds(5), interval: .milliseconds(20)).run(after: Self.locked) { sync.withLock { $0.removeFirst() } }.isLocked)
    }

    @Test func endsAtTheTimeoutStillLocked() async throws {
        let start = ContinuousClock.now
        let result = try await UnlockWait(timeout: .milliseconds(300), interval: .milliseconds(200)).run(after: Self.locked) {
            () async throws(CredentialVaultError) in Self.locked
        }
        let elapsed = start.duration(to: .now)
        #expect(result.isLocked)
        #expect(elapsed >= .milliseconds(300) && elapsed < .milliseconds(1300), "\(elapsed)")
        #expect(throws: CredentialVaultError.locked) { try result.unlockedStatus() }
    }

    @Test func anUnlockedOrAbsentServiceEndsTheWaitAtOnce() {
        let wait = UnlockWait(timeout: .seconds(5), interval: .milliseconds(100))
        #expect(wait.pause(after: Self.unlocked) == nil)
        #expect(wait.pause(after: .unavailable(.notAvailable("no bus"))) == nil)
        #expect(wait.pause(after: Self.locked) == .milliseconds(100))
    }

    @Test func cancellingTheWaitReturnsPromptly() async throws {
        let task = Task { () async throws(CredentialVaultError) -> KeyringProbe in
            try await UnlockWait(timeout: .seconds(30), interval: .seconds(10)).run(after: Self.locked) {
                () async throws(CredentialVaultError) in Self.locked
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(start.duration(to: .now) < .milliseconds(50))
        guard case .failure(let error) = result, error as? CredentialVaultError == .cancelled else {
            Issue.record("not cancelled: \(result)")
            return
        }
    }
}

