import Synchronization

/// For tests: how many items of a keyring file were decrypted (`OpenedKeyring.decryptions`).
final class DecryptionCount: Sendable {
    /// The count so far.
    let count = Atomic<Int>(0)
}
