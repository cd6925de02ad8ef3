import CredentialVault
import Foundation
import Synchronization
import Logging

/// The store's connections: each operation checks one out (an idle one, or a new one), uses it
/// alone, and gives it back; a broken one is closed. Lost connections and failovers are retried
/// on a new connection, a bounded number of times with a short backoff.
final class ConnectionPool: Sendable {
    private let configuration: PostgresConfiguration
    private let idle = Mutex<[PGConnection]>([])
    /// At most this many idle connections are kept (the rest are closed when given back).
    private let maxIdle: Int

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        maxIdle = configuration.threads
    }

    /// The client's deadline for one statement: the server's timeout plus a second.
    var statementDeadline: ContinuousClock.Instant { .now + configuration.statementTimeout + .seconds(1) }

    /// Runs `body` on a connection. With `retrySafe`, a lost connection, a standby or a
    /// transient failure is retried on a new connection (up to `reconnectAttempts` times); else
    /// a connection lost after the statement was sent is an error (`notAvailable`) whose outcome
    /// is unknown, as after `timedOut`.
    func withConnection<T>(
        retrySafe: Bool = true, _ body: (PGConnection) throws(PGFailure) -> T
    ) throws(CredentialVaultError) -> T {
        var attempt = 0
        while true {
            let connection = try checkOut()
            do throws(PGFailure) {
                let value = try body(connection)
                checkIn(connection)
                return value
            } catch {
                if !connection.isBroken && !error.connectionLost { checkIn(connection) }
                guard error.isTransient, retrySafe || error.sqlState == "25006", attempt < configuration.reconnectAttempts else {
                    throw error.error
                }
                attempt += 1
                retrying(error, attempt: attempt)
                backoff(attempt)
            }
        }
    }

    /// Logs and counts a transaction run again after `error` (PostgreSQL's serialization
    /// failure, or a lost connection, a standby, a server shutting down).
    private func retrying(_ error: PGFailure, attempt: Int) {
        let reason = error.sqlState == "40001" ? "serialization" : "connection"
        configuration.metrics.fleetRetry(reason)
        configuration.logger.warning(
            "a fleet store statement failed (\(reason), SQLSTATE \(error.sqlState ?? "none")): retry \(attempt) of \(configuration.reconnectAttempts) on a new connection",
            metadata: ["category": "fleet"])
    }

    /// Takes a connection out of the pool for as long as the caller wants (the exclusive-access
    /// holding); it comes back with `checkIn` or is dropped.
    func checkOut() throws(CredentialVaultError) -> PGConnection {
        if let connection = idle.withLock({ $0.popLast() }) { return connection }
        var attempt = 0
        while true {
            do throws(CredentialVaultError) {
                return try PGConnection.connect(
                    configuration.connectionString, password: configuration.password, connectTimeout: configuration.connectTimeoutSeconds,
                    statementTimeout: configuration.statementTimeout, lockTimeout: configuration.lockTimeout,
                    deadline: statementDeadline)
            } catch {
                // A refused or unreachable server (a failover in progress) is retried; a refused
                // password, a failed TLS verification or a timeout is not.
                guard case .notAvailable = error, attempt < configuration.reconnectAttempts else {
                    configuration.logger.warning("connecting to the fleet store failed: \(error)", metadata: ["category": "fleet"])
                    throw error
                }
                attempt += 1
                configuration.metrics.fleetRetry("connect")
                configuration.logger.warning(
                    "connecting to the fleet store failed (\(error)): retry \(attempt) of \(configuration.reconnectAttempts)", metadata: ["category": "fleet"])
                backoff(attempt)
            }
        }
    }

    /// Gives a connection back (closed instead when broken or when enough are idle).
    func checkIn(_ connection: PGConnection) {
        guard !connection.isBroken else { return }
        idle.withLock { pool in
            if pool.count < maxIdle { pool.append(connection) }
        }
    }

    /// Closes every idle connection (tests cut connections this way).
    func closeIdle() { idle.withLock { $0.removeAll() } }

    /// 50 ms, 100 ms, 200 ms, ... (at most 800 ms): a primary's restart or promotion takes
    /// tens to hundreds of milliseconds. A backoff between attempts, not a synchronisation.
    private func backoff(_ attempt: Int) {
        let ms = 50 << min(attempt - 1, 4)
        usleep(UInt32(ms) * 1000)
    }
}
