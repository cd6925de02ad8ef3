#if Configuration
import Configuration

/// What a `VaultConfigProvider` changes: its current snapshot, which reload made it, and who
/// watches.
struct VaultConfigProviderState: Sendable {
    /// One `watchValue` caller: the type it reads its key as, and its stream.
    struct ValueWatcher: Sendable {
        let type: ConfigType
        let continuation: AsyncStream<Result<LookupResult, any Error>>.Continuation
    }

    var snapshot: VaultConfigSnapshot
    /// Reloads are numbered when they start; a reload's snapshot replaces the current one only
    /// when it started after the reload that made the current one (two concurrent reloads never
    /// put the older read back).
    var reloadsStarted: UInt64 = 0
    var currentReload: UInt64 = 0
    var nextWatcher: UInt64 = 0
    var valueWatchers: [AbsoluteConfigKey: [UInt64: ValueWatcher]] = [:]
    var snapshotWatchers: [UInt64: AsyncStream<any ConfigSnapshot>.Continuation] = [:]

    init(snapshot: VaultConfigSnapshot) {
        self.snapshot = snapshot
    }

    mutating func newWatcherID() -> UInt64 {
        nextWatcher += 1
        return nextWatcher
    }
}
#endif
