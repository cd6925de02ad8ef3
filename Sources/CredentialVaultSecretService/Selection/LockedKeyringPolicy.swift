/// What `BackendResolver`'s automatic choice does when the Secret Service is there but its
/// default collection is locked. A locked keyring is never taken for a missing one by
/// default: falling back then would split an application's credentials between two stores.
public enum LockedKeyringPolicy: Sendable, Hashable {
    /// The decision is the Secret Service, reported locked (`BackendDecision.isKeyringLocked`);
    /// `open` throws `locked`. The program then unlocks (`BackendResolver.unlockInteractively()`)
    /// or waits (`BackendResolver.waitForUnlock(timeout:)`) and opens again. The default.
    case reportLocked
    /// The sealed file, as when the Secret Service is unavailable. Only for programs that keep
    /// nothing in the keyring, or that accept two stores (an explicit opt-in).
    case useSealedFile
    /// Polls the keyring's state (every `BackendResolver.unlockPollInterval`) until it is
    /// unlocked or `timeout` has passed, then decides as `reportLocked` does. The async
    /// `decide`/`open` suspend meanwhile and are cancellable; the sync ones block the thread.
    case waitForUnlock(timeout: Duration)
}
