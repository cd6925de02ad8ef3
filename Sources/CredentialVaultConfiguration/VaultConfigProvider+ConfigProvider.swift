#if Configuration
import Configuration
import CredentialVault

extension VaultConfigProvider: ConfigProvider {
    /// The value of `key` in the current snapshot (from memory, no I/O): secret, converted to
    /// `type`; absent when there is none or the mapping cannot represent `key`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let snapshot = state.withLock { $0.snapshot }
        return try snapshot.value(forKey: key, type: type)
    }

    /// Reloads (`reload()`: its errors are thrown, the previous snapshot kept), then answers
    /// from the new snapshot.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try await reload()
        return try value(forKey: key, type: type)
    }

    /// Emits the current value of `key`, then the new one after each reload that added, changed
    /// or deleted it; ends when the handler returns (the handler's task cancelled ends the
    /// sequence for a handler that iterates until then).
    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.newWatcherID()
            state.valueWatchers[key, default: [:]][id] = VaultConfigProviderState.ValueWatcher(type: type, continuation: continuation)
            // Under the lock: no reload can slip between this value and the watcher's registration.
            let snapshot = state.snapshot
            continuation.yield(Result { try snapshot.value(forKey: key, type: type) })
            return id
        }
        defer {
            state.withLock { state in
                state.valueWatchers[key]?[id] = nil
                if state.valueWatchers[key]?.isEmpty == true { state.valueWatchers[key] = nil }
            }
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    /// The current snapshot: immutable, its values in guarded memory for as long as it is held.
    public func snapshot() -> any ConfigSnapshot {
        state.withLock { $0.snapshot }
    }

    /// Emits the current snapshot, then each new one a reload makes when something changed.
    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.newWatcherID()
            state.snapshotWatchers[id] = continuation
            continuation.yield(state.snapshot)
            return id
        }
        defer {
            _ = state.withLock { state in state.snapshotWatchers.removeValue(forKey: id) }
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }
}
#endif
