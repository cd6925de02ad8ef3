import CredentialVaultTesting

/// Runs `body`, whose calls block their thread (processes waited for, synchronous store or TPM
/// calls), on a thread of its own as part of this task: its expectations stay the test's, and
/// its waits never hold one of Swift's cooperative threads, which every test running in
/// parallel shares (two of them blocked stop every other test's tasks on this 2-core machine).
func offThePool<T>(_ body: () throws -> T) async throws -> T {
    let thread = PrivatePool(width: 1)
    defer { thread.shutdown() }
    return try await withTaskExecutorPreference(thread) { try body() }
}
