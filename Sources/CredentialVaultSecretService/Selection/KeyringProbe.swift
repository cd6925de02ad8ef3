import CredentialVault
import Foundation

/// What the Secret Service answered when the resolver asked for its state.
enum KeyringProbe: Sendable {
    /// Reachable, default collection unlocked.
    case unlocked(SecretServiceStatus)
    /// Reachable, default collection locked.
    case locked(SecretServiceStatus)
    /// Not there: no bus, no provider (`notAvailable`). Only this means the sealed file.
    case unavailable(CredentialVaultError)
    /// A provider answers but has no default collection (KWallet at the very first login,
    /// until kwalletd restarts): not "no provider", so never a silent fallback either (the
    /// app's credentials would split between two stores once the collection appears).
    case withoutCollection(CredentialVaultError)
    /// There, but it did not say whether it is locked: no answer in time (a daemon stopped or
    /// busy at login), its key lock held, a refused or failed call. Never taken for "not
    /// there": the keyring may hold the credentials, and using the file would split them.
    case unresponsive(CredentialVaultError)

    /// Classifies what `probe` (`SecretServiceStore.probe()`) returns or throws.
    init(_ probe: () throws(CredentialVaultError) -> SecretServiceStore.Probe) {
        do {
            self = Self.answered(try probe())
        } catch {
            self = Self.failed(error)
        }
    }

    private static func answered(_ probe: SecretServiceStore.Probe) -> KeyringProbe {
        switch probe {
        case .status(let found): found.isLocked ? .locked(found) : .unlocked(found)
        case .noDefaultCollection(let error): .withoutCollection(error)
        }
    }

    private static func failed(_ error: CredentialVaultError) -> KeyringProbe {
        if case .notAvailable = error { return .unavailable(error) }
        return .unresponsive(error)
    }

    /// Asks `store` without blocking the caller (its async `status()`). A cancelled task throws
    /// `cancelled`: that is no answer about the keyring, so never a reason to fall back.
    static func asking(_ store: SecretServiceStore) async throws(CredentialVaultError) -> KeyringProbe {
        do {
            return answered(try await store.probe())
        } catch .cancelled {
            throw .cancelled
        } catch {
            // A task cancelled while its deadline fired gets `timedOut`: still no fallback.
            if Task.isCancelled { throw .cancelled }
            return failed(error)
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
        case .unavailable(let error), .unresponsive(let error), .withoutCollection(let error): throw error
        }
    }
}

/// A bounded wait for a locked keyring to be unlocked: asks again every `interval` (at least
/// 10 ms; the last pause shortened to end at `timeout`) while the answer is "locked" or none
/// came (a daemon that did not answer in time may answer the next question).
struct UnlockWait: Sendable {
    let timeout: Duration
    let interval: Duration
    let start: ContinuousClock.Instant

    /// The wait starts now: make it before the first question, so that the questions count.
    init(timeout: Duration, interval: Duration) {
        self.timeout = timeout
        self.interval = max(interval, .milliseconds(10))
        start = .now
    }

    /// The pause before asking again, or `nil` when the wait is over (the answer is neither
    /// "locked" nor "no answer", or the timeout has passed).
    func pause(after probe: KeyringProbe) -> Duration? {
        switch probe {
        case .locked, .unresponsive: break
        case .unlocked, .unavailable, .withoutCollection: return nil
        }
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
