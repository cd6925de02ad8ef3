import CredentialVaultTesting

/// Runs `body`, whose calls block their thread (processes waited for, synchronous store or TPM
/// calls), on a thread of its own as part of this task: its expectations stay the test's, and
/// its waits never hold one of Swift's cooperative threads, which every test running in
/// parallel shares (two of them blocked stop every other test's tasks on a 2-core machine).
/// For a test of a pool-bound suite; a suite with `.ownThread` runs on its own thread already.
package func offThePool<T>(_ body: () throws -> T) async throws -> T {
    let thread = PrivatePool(width: 1)
    defer { thread.shutdown() }
    return try await withTaskExecutorPreference(thread) { try body() }
}
