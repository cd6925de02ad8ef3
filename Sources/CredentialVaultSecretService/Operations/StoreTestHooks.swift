import CLibSecret
import Synchronization

/// Seams for tests only (a store's own hooks are never set otherwise): faults to inject into
/// its reads and writes, and a hook that tells when an operation starts waiting for a
/// provider's prompt.
///
/// The faults are what kwalletd5 before KWallet 6.25 causes now and then (KDE bug 514194, a
/// session key negotiated wrongly), which cannot be produced on demand: the next `count` secrets
/// `GetSecrets` returns are left out of its answer, as libsecret leaves out a secret it cannot
/// decrypt; the next `count` secrets sent with `CreateItem` are cut short by one byte, so that
/// the provider cannot decrypt them, as with a wrong key.
final class StoreTestHooks: Sendable {
    private let remaining = Atomic<Int>(0)
    private let remainingSent = Atomic<Int>(0)
    private let promptWaiting = Mutex<(@Sendable () -> Void)?>(nil)

    /// Makes the next `count` secrets read unreadable.
    func dropSecrets(_ count: Int) { remaining.store(count, ordering: .sequentiallyConsistent) }

    /// Whether the secret being read now is to be left out (and counts it).
    func dropsNextSecret() -> Bool { Self.takeOne(remaining) }

    /// Makes the next `count` secrets sent undecryptable.
    func corruptSentSecrets(_ count: Int) { remainingSent.store(count, ordering: .sequentiallyConsistent) }

    /// Whether the secret being sent now is to be cut short (and counts it).
    func corruptsNextSentSecret() -> Bool { Self.takeOne(remainingSent) }

    /// Counts one down from `counter`; `false` when it was at zero.
    private static func takeOne(_ counter: borrowing Atomic<Int>) -> Bool {
        while true {
            let left = counter.load(ordering: .sequentiallyConsistent)
            guard left > 0 else { return false }
            if counter.compareExchange(expected: left, desired: left - 1, ordering: .sequentiallyConsistent).exchanged { return true }
        }
    }

    /// `secret`, an encoded Secret Service secret `(oayays)` (floating, taken), with the last
    /// byte of its value cut off (floating): an encrypted value then no longer fills whole
    /// cipher blocks, and no key decrypts it.
    static func cutShort(_ secret: OpaquePointer) -> OpaquePointer {
        g_variant_ref_sink(secret)
        defer { g_variant_unref(secret) }
        let parts = (0..<4).map { g_variant_get_child_value(secret, $0)! }
        defer { parts.forEach { g_variant_unref($0) } }
        var length: gsize = 0
        let bytes = g_variant_get_fixed_array(parts[2], &length, 1)
        let byteType = g_variant_type_new("y")
        defer { g_variant_type_free(byteType) }
        var children: [OpaquePointer?] = [parts[0], parts[1], g_variant_new_fixed_array(byteType, bytes, max(length, 1) - 1, 1), parts[3]]
        return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 4) }
    }

    /// Calls `hook` each time an operation has started a prompt and waits for it to complete.
    func onPromptWaiting(_ hook: (@Sendable () -> Void)?) { promptWaiting.withLock { $0 = hook } }

    /// An operation started a prompt and now waits for it.
    func promptIsWaiting() { promptWaiting.withLock { $0 }?() }
}
