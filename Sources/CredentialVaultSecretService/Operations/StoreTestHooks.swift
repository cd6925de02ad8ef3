import Synchronization

/// Seams for tests only (a store's own hooks are never set otherwise): a fault to inject into
/// its reads, and a hook that tells when an operation starts waiting for a provider's prompt.
///
/// The fault: the next `count` secrets `GetSecrets` returns are left out of its answer, as
/// libsecret leaves out a secret it cannot decrypt. That is what kwalletd5 before KWallet 6.25
/// causes now and then (KDE bug 514194, a session key negotiated wrongly), which cannot be
/// produced on demand.
final class StoreTestHooks: Sendable {
    private let remaining = Atomic<Int>(0)
    private let promptWaiting = Mutex<(@Sendable () -> Void)?>(nil)

    /// Makes the next `count` secrets read unreadable.
    func dropSecrets(_ count: Int) { remaining.store(count, ordering: .sequentiallyConsistent) }

    /// Whether the secret being read now is to be left out (and counts it).
    func dropsNextSecret() -> Bool {
        while true {
            let left = remaining.load(ordering: .sequentiallyConsistent)
            guard left > 0 else { return false }
            if remaining.compareExchange(expected: left, desired: left - 1, ordering: .sequentiallyConsistent).exchanged { return true }
        }
    }

    /// Calls `hook` each time an operation has started a prompt and waits for it to complete.
    func onPromptWaiting(_ hook: (@Sendable () -> Void)?) { promptWaiting.withLock { $0 = hook } }

    /// An operation started a prompt and now waits for it.
    func promptIsWaiting() { promptWaiting.withLock { $0 }?() }
}
