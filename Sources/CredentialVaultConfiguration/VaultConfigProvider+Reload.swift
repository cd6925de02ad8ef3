#if Configuration
import Configuration
import CredentialVault
import Logging

extension VaultConfigProvider {
    /// Reads every value under the mapping again; when the new snapshot differs, it replaces the
    /// current one and the watchers hear of it (a value watcher only when its key's value was
    /// added, changed or deleted; snapshot watchers once per changed reload).
    ///
    /// On failure the current snapshot stays in use: the store's `CredentialVaultError` is
    /// thrown, and logged at `warning` by its case only (`locked`, `permissionDenied`, ...: some
    /// messages name files, and a file can be a credential's name); `cancelled` is thrown and
    /// not logged. Concurrent reloads
    /// are allowed; the snapshot of the one that started last wins.
    public func reload() async throws(CredentialVaultError) {
        let (ticket, previous) = state.withLock { state in
            state.reloadsStarted += 1
            return (state.reloadsStarted, state.snapshot.values)
        }
        let values: [[UInt8]: SecureBytes]
        do {
            values = try await VaultSnapshotReading.read(from: store, mapping: mapping, previous: previous)
        } catch {
            if error != .cancelled {
                logger.warning(
                    "reading the configuration from the credential store failed: the previous values stay in use",
                    metadata: ["provider": .string(providerName), "error": .string(error.kind)])
            }
            throw error
        }
        publish(makeSnapshot(values), ticket: ticket)
    }

    /// Polls: calls `reload()` every `pollInterval` until the task is cancelled, then returns.
    /// A failed reload is logged (see `reload()`) and the next one tried at the next interval.
    /// Run it in a task of the application's (a `ServiceGroup`'s service, a `TaskGroup`'s child).
    /// Throws `invalidArgument` for an interval that is not positive.
    public func run(pollInterval: Duration = .seconds(30)) async throws(CredentialVaultError) {
        try await run(pollInterval: pollInterval) { interval in try await Task.sleep(for: interval) }
    }

    /// `run(pollInterval:)` with the wait between reloads given (tests hand each tick over).
    /// `sleep` throwing (as `Task.sleep` does when cancelled) ends the loop.
    package func run(pollInterval: Duration, sleep: @Sendable (Duration) async throws -> Void) async throws(CredentialVaultError) {
        guard pollInterval > .zero else { throw .invalidArgument("the poll interval must be positive") }
        while !Task.isCancelled {
            do { try await sleep(pollInterval) } catch { return }
            do {
                try await reload()
            } catch .cancelled {
                return
            } catch {
                // Logged by reload; the last good snapshot stays until a later reload succeeds.
            }
        }
    }

    /// Makes `snapshot` current unless a reload that started later made the current one, and
    /// tells the watchers what changed, under the lock: two reloads' notices then reach each
    /// watcher in the order their snapshots became current (told after the lock, a reload could
    /// be overtaken by a later one and leave a watcher on the older values). A yield only
    /// buffers the element and wakes the watcher's task: no watcher code runs under the lock.
    private func publish(_ snapshot: VaultConfigSnapshot, ticket: UInt64) {
        let notified: Int? = state.withLock { state in
            guard ticket > state.currentReload else { return nil }
            let old = state.snapshot
            state.currentReload = ticket
            state.snapshot = snapshot
            guard snapshot.differs(from: old) else { return 0 }
            var count = 0
            for (key, watchers) in state.valueWatchers where snapshot.differs(from: old, at: key) {
                for watcher in watchers.values {
                    watcher.continuation.yield(Result { try snapshot.value(forKey: key, type: watcher.type) })
                    count += 1
                }
            }
            for continuation in state.snapshotWatchers.values { continuation.yield(snapshot) }
            return count
        }
        guard let notified else {
            logger.debug("a later reload of the configuration finished first: this one's values were not used", metadata: ["provider": .string(providerName)])
            return
        }
        logger.debug(
            "configuration reloaded from the credential store",
            metadata: ["provider": .string(providerName), "values": .stringConvertible(snapshot.values.count), "valueWatchersNotified": .stringConvertible(notified)])
    }
}
#endif
