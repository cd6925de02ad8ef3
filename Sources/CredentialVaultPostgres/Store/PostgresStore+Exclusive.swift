import CredentialVault
import Foundation
import Synchronization

/// Fleet-wide single flight: a PostgreSQL session advisory lock on the store's id, held on a
/// connection pinned for the body. The wait is bounded (`exclusiveAccessTimeout`, enforced as
/// the server's `lock_timeout`: `busy` after it); the server releases the lock when the
/// holder's connection ends, so a holder that dies (or loses its network) frees it.
extension PostgresStore: ExclusiveAccessStore {
    /// Marks the holding of one body (re-entrance from the same task): `active` until it returns.
    final class Holding: Sendable {
        let active = Atomic(true)
    }

    @TaskLocal static var holdings: [ObjectIdentifier: Holding] = [:]

    /// The lock's key: the first 8 bytes of the store id (the same on every host).
    var lockKey: Int64 { keys.storeID.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) } }

    /// Runs `body` holding the fleet-wide lock of this store. Reads inside `body` go to the
    /// server (the cache is expired when the lock is taken), so they see every write made
    /// before. Re-entrant for the task that holds it. Throws `busy` past the wait.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let me = ObjectIdentifier(self)
        if let holding = Self.holdings[me], holding.active.load(ordering: .acquiring) { return try await body() }
        let connection = try await lockThreads.run { flag throws(CredentialVaultError) in try self.acquireLock(cancellation: flag) }
        cache.expire()
        let holding = Holding()
        var holdings = Self.holdings
        holdings[me] = holding
        do {
            let value = try await Self.$holdings.withValue(holdings) { try await body() }
            holding.active.store(false, ordering: .releasing)
            await release(connection)
            return value
        } catch {
            holding.active.store(false, ordering: .releasing)
            await release(connection)
            throw error
        }
    }

    /// Takes the lock on a connection of its own (kept out of the pool while held). A task
    /// cancelled while it waits cancels the wait on the server (`PQcancel`): `cancelled` at once.
    func acquireLock(cancellation: CancellationFlag) throws(CredentialVaultError) -> PGConnection {
        let connection = try pool.checkOut()
        if let canceller = connection.canceller() { cancellation.onCancel { canceller.cancel() } }
        // Cancelled before the wait was sent: a cancel request would have found nothing to cancel.
        if cancellation.isCancelled {
            pool.checkIn(connection)
            throw .cancelled
        }
        let wait = PGConnection.milliseconds(configuration.exclusiveAccessTimeout)
        // Integers formatted by the store itself, not caller text: the statement is fixed.
        let sql =
            "BEGIN; SET LOCAL lock_timeout = \(wait); SET LOCAL statement_timeout = \(wait + 1000); "
            + "SELECT pg_advisory_lock(\(lockKey)); COMMIT"
        do throws(PGFailure) {
            try connection.simple(sql, deadline: .now + configuration.exclusiveAccessTimeout + .seconds(2))
        } catch {
            if !connection.isBroken { try? connection.simple("ROLLBACK", deadline: pool.statementDeadline) }
            pool.checkIn(connection)
            if cancellation.isCancelled { throw .cancelled }
            throw error.sqlState == "55P03" || error.sqlState == "57014" ? .busy : error.error
        }
        return connection
    }

    /// Unlocks and gives the connection back; a lost connection has released the lock already.
    private func release(_ connection: PGConnection) async {
        _ = try? await lockThreads.run { _ throws(CredentialVaultError) in
            do throws(PGFailure) {
                try connection.simple("SELECT pg_advisory_unlock(\(self.lockKey))", deadline: self.pool.statementDeadline)
                self.pool.checkIn(connection)
            } catch {}
        }
    }
}
