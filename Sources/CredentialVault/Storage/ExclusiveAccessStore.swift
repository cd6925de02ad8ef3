/// A store whose writers can shut each other out, across processes where the backend allows
/// (the sealed file's lock file), so that a read-modify-write spanning several calls and an
/// `await` (a token refresh) happens once even when several processes race for it. Both the
/// synchronous and the asynchronous operations of the store called inside the body (from the
/// same task) run under the lock held.
public protocol ExclusiveAccessStore: Sendable {
    /// Runs `body` while holding the store's exclusive lock. Calls that `body` makes on this
    /// same store (from the same task) do not take the lock again, and reads inside `body` see
    /// every write made by other processes before the lock was taken.
    /// Throws `CredentialVaultError.busy` when the lock is not acquired within the store's
    /// bounded wait; rethrows what `body` throws.
    func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
}
