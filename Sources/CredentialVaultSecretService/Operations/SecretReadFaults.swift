import Synchronization

/// A fault a test can inject into a store's reads (a seam for tests only; a store's own is
/// never armed otherwise): the next `count` secrets `GetSecrets` returns are left out of its
/// answer, as libsecret leaves out a secret it cannot decrypt. That is what kwalletd5 before
/// KWallet 6.25 causes now and then (KDE bug 514194, a session key negotiated wrongly), which
/// cannot be produced on demand.
final class SecretReadFaults: Sendable {
    private let remaining = Atomic<Int>(0)

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
}
