/// The events the modules count, one call each (names, types and dimensions: docs/API.md,
/// "Metrics"). The dimension values are this file's literals and enum cases only.
extension VaultMetrics {
    /// The backend that counted, the `backend` dimension.
    package enum Backend: String, Sendable {
        case file, secretService = "secret_service", tpm, postgres
    }

    /// A wait for a vault's lock that another process held ended after `waited`: the lock
    /// taken (`acquired`), or `busy` at the deadline (which also counts a lock timeout).
    package func lockWait(_ waited: Duration, acquired: Bool) {
        time(.lockWait, [("backend", Backend.file.rawValue), ("outcome", acquired ? "acquired" : "busy")], waited)
        if !acquired { count(.lockTimeouts, [("backend", Backend.file.rawValue)]) }
    }

    /// `backend` gave up an operation of kind `operation` (a fixed word such as `connect`,
    /// `command`, `statement`, `call`) at its deadline: `timedOut`.
    package func timedOut(_ backend: Backend, operation: String) {
        count(.timeouts, [("backend", backend.rawValue), ("operation", operation)])
    }

    /// `backend` refused its stored data with `error`: counted when it is `tampered`,
    /// `corrupted` (tamper detections, `kind` dimension) or `rolledBack` (rollback refusals);
    /// any other error is not counted here.
    package func refused(_ error: CredentialVaultError, backend: Backend) {
        switch error {
        case .tampered: count(.tamperDetections, [("backend", backend.rawValue), ("kind", "tampered")])
        case .corrupted: count(.tamperDetections, [("backend", backend.rawValue), ("kind", "corrupted")])
        case .rolledBack: count(.rollbackRefusals, [("backend", backend.rawValue)])
        default: break
        }
    }

    /// The fleet store runs a transaction again, for `reason` (`serialization`: PostgreSQL
    /// aborted it for a concurrent one; `rotation`: a key rotation landed meanwhile;
    /// `connection`: the connection was lost before the transaction started).
    package func fleetRetry(_ reason: String) {
        count(.fleetRetries, [("backend", Backend.postgres.rawValue), ("reason", reason)])
    }

    /// The fleet store completed a rotation of its keys (`kind`: `key` or `host`... the fixed
    /// word the call site gives).
    package func fleetRotation(_ kind: String) {
        count(.fleetRotations, [("backend", Backend.postgres.rawValue), ("kind", kind)])
    }

    /// A session refresh that asked the provider ended with `outcome` (`success`, or the
    /// failure's kind: `AuthError`'s case name) after `duration`.
    package func sessionRefresh(outcome: String, duration: Duration) {
        count(.sessionRefreshes, [("outcome", outcome)])
        time(.sessionRefreshDuration, [("outcome", outcome)], duration)
    }

    /// The Secret Service showed a prompt of `Unlock` for `purpose` (`collection`: its unlock
    /// dialog; `item_access`: KeePassXC's access confirmation), answered with `outcome`
    /// (`answered`, `dismissed`, `timed_out`, `cancelled`, `failed`).
    package func unlockPrompt(purpose: String, outcome: String) {
        count(.unlockPrompts, [("backend", Backend.secretService.rawValue), ("purpose", purpose), ("outcome", outcome)])
    }
}
