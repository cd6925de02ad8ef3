import CredentialVault
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
import Logging
#endif

/// Wakes the cache early when another host changes a record: a thread of its own with its
/// own connection, `LISTEN`ing on the store's channel (the trigger's `pg_notify`). Only a
/// hint: notifications are lost while the listener reconnects and never reach a replica, so
/// the generation check at the freshness interval is what bounds staleness, not this.
final class ChangeListener: Sendable {
    /// Set by `stop()`; shared with the thread (which holds neither the store nor this object).
    private final class Flag: Sendable {
        let value = Atomic(false)
    }

    private let stopped = Flag()

    /// Starts listening; `stop()` ends the thread within half a second.
    init(configuration: PostgresConfiguration, channel: String, cache: RecordCache) {
        let thread = Thread { [stopped] in
            Self.listen(configuration: configuration, channel: channel, cache: cache, stopped: stopped)
        }
        thread.name = "credvault-pglisten"
        thread.stackSize = 1 << 18
        thread.start()
    }

    func stop() { stopped.value.store(true, ordering: .relaxed) }

    private static func listen(configuration: PostgresConfiguration, channel: String, cache: RecordCache, stopped: Flag) {
        var connection: PGConnection?
        // Logged once per outage, not at each attempt (every second while the server is away).
        var lost = false
        while !stopped.value.load(ordering: .relaxed) {
            if connection == nil {
                do throws(CredentialVaultError) {
                    let fresh = try PGConnection.connect(
                        configuration.connectionString, password: configuration.password, connectTimeout: configuration.connectTimeoutSeconds,
                        statementTimeout: configuration.statementTimeout, lockTimeout: configuration.lockTimeout,
                        deadline: .now + configuration.statementTimeout)
                    try? fresh.simple("LISTEN \(channel)", deadline: .now + configuration.statementTimeout)
                    if lost { configuration.logger.info("the fleet store's change listener reconnected", metadata: ["category": "fleet"]) }
                    connection = fresh
                    lost = false
                    // Changes made while this listener was away were not notified: re-check.
                    cache.expire()
                } catch {
                    if !lost {
                        configuration.logger.warning(
                            "the fleet store's change listener cannot connect (\(error)): retrying; reads still check the store's generation",
                            metadata: ["category": "fleet"])
                    }
                    lost = true
                    // The server is away: the generation check still bounds staleness. Retry later.
                    for _ in 0..<4 where !stopped.value.load(ordering: .relaxed) { usleep(250_000) }
                    continue
                }
            }
            guard let current = connection else { continue }
            var descriptor = pollfd(fd: current.socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 500)
            guard ready > 0 else { continue }
            do throws(PGFailure) {
                if !(try current.drainNotifications()).isEmpty { cache.expire() }
            } catch {
                configuration.logger.info("the fleet store's change listener lost its connection: reconnecting", metadata: ["category": "fleet"])
                lost = true
                connection = nil
            }
        }
    }
}
