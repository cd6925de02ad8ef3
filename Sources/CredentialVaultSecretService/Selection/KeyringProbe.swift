import CredentialVault
import Foundation

/// What the Secret Service answered when the resolver asked for its state.
enum KeyringProbe: Sendable {
    /// Reachable, default collection unlocked.
    case unlocked(SecretServiceStatus)
    /// Reachable, default collection locked.
    case locked(SecretServiceStatus)
    /// No bus, no provider, no default collection, no answer in time (or another failure).
    case unavailable(CredentialVaultError)

    /// Classifies what `status` returns or throws.
    init(_ status: () throws(CredentialVaultError) -> SecretServiceStatus) {
        do {
            let found = try status()
            self = found.isLocked ? .locked(found) : .unlocked(found)
        } catch {
            self = .unavailable(error)
        }
    }

    /// Asks `store` without blocking the caller (its async `status()`). A cancelled task throws
    /// `cancelled`: that is no answer about the keyring, so never a reason to fall back.
    static func asking(_ store: SecretServiceStore) async throws(CredentialVaultError) -> KeyringProbe {
        do {
            let found = try await store.status()
            return found.isLocked ? .locked(found) : .unlocked(found)
        } catch .cancelled {
            throw .cancelled
        } catch {
            return .unavailable(error)
        }
    }

    /// Whether the keyring was found locked.
    var isLocked: Bool {
        if case .locked = self { return true }
        return false
    }

    /// The unlocked state; throws `locked` for a locked keyring, the error for an unavailable one.
    func unlockedStatus() throws(CredentialVaultError) -> SecretServiceStatus {
        switch self {
        case .unlocked(let status): return status
        case .locked: throw .locked
        case .unavailable(let error): throw error
        }
    }
}

/// A bounded wait for a locked keyring to be unlocked: asks again every `interval` (the last
/// pause shortened to end at `timeout`) while the answer is "locked".
struct UnlockWait: Sendable {
    let timeout: Duration
    let interval: Duration
    let start = ContinuousClock.now

    /// The pause before asking again, or `nil` when the wait is over (the answer is not
    /// "locked", or the timeout has passed).
    func pause(after probe: KeyringProbe) -> Duration? {
        guard probe.isLocked else { return nil }
        let remaining = timeout - start.duration(to: .now)
        return remaining > .zero ? min(interval, remaining) : nil
    }

    /// Waits on the calling thread (blocking it) and returns the last answer.
    func run(after first: KeyringProbe, probe: () -> KeyringProbe) -> KeyringProbe {
        var current = first
        while let pause = pause(after: current) {
            let (seconds, attoseconds) = pause.components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            current = probe()
        }
        return current
    }

    /// Waits without blocking a thread (the pauses are `Task.sleep`) and returns the last
    /// answer; throws `cancelled` as soon as the task is cancelled.
    func run(after first: KeyringProbe, probe: () async throws(CredentialVaultError) -> KeyringProbe) async throws(CredentialVaultError) -> KeyringProbe {
        var current = first
        while let pause = pause(after: current) {
            do { try await Task.sleep(for: pause) } catch { throw .cancelled }
            current = try await probe()
        }
        return current
    }
}
