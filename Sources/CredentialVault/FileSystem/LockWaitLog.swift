import Logging

/// What a wait for a vault's lock tells the log: nothing while it is short (most waits are a
/// few milliseconds behind another write); once it passes the threshold, that it is waiting,
/// then how it ended (the lock taken, or `busy` at the deadline). Every wait that found the lock
/// held at least once is timed in the configuration's metrics, however short.
struct LockWaitLog: Sendable {
    private let logger: Logger
    private let metrics: VaultMetrics
    private let threshold: Duration
    private let metadata: Logger.Metadata
    private let started = ContinuousClock.now
    private var reported = false
    /// An attempt found the lock held: the wait is timed when it ends.
    private var contended = false

    /// A wait for the lock of the vault at `path`, logged as `configuration` says.
    init(_ configuration: SealedFileConfiguration, vault path: String) {
        logger = configuration.logger
        metrics = configuration.metrics
        threshold = configuration.lockWaitLogThreshold
        metadata = ["vault": .string(path)]
    }

    private var waited: String { "\((ContinuousClock.now - started).milliseconds) ms" }

    /// An attempt found the lock held.
    mutating func refused() {
        contended = true
        guard !reported, ContinuousClock.now - started >= threshold else { return }
        reported = true
        logger.info("waiting for the vault's lock, which another process holds (\(waited) so far)", metadata: metadata)
    }

    /// The lock was taken.
    func acquired() {
        if contended { metrics.lockWait(ContinuousClock.now - started, acquired: true) }
        guard reported else { return }
        logger.info("took the vault's lock after waiting \(waited)", metadata: metadata)
    }

    /// The deadline passed: the caller throws `busy`.
    func gaveUp() {
        metrics.lockWait(ContinuousClock.now - started, acquired: false)
        logger.warning("gave up waiting for the vault's lock after \(waited): another process still holds it (busy)", metadata: metadata)
    }
}

private extension Duration {
    /// Whole milliseconds, for log lines.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
