import CredentialVault

/// What went wrong in one libpq call, before it is turned into the one error enum.
struct PGFailure: Error, Sendable {
    /// The SQLSTATE the server sent (`nil` for client-side failures: a lost connection, a
    /// timeout, a failed connect).
    let sqlState: String?
    /// The connection cannot be used again (it is closed and a new one is made).
    let connectionLost: Bool
    /// A fixed phrase, or libpq's connect diagnostic (host names and TLS reasons). Never the
    /// connection string or its password: a malformed string is refused before libpq sees it
    /// (`ConnectionString`, whose message drops what libpq quoted), and a connect diagnostic
    /// has both redacted.
    let reason: String
    /// The client-side deadline passed.
    var timedOut = false

    /// A client-side failure that leaves the connection unusable.
    static func lost(_ reason: String) -> PGFailure { PGFailure(sqlState: nil, connectionLost: true, reason: reason) }

    /// Whether a retry on a new connection may succeed (the connection was lost, the server is
    /// a standby now or is shutting down, a serialization failure or deadlock was reported).
    var isTransient: Bool {
        if connectionLost && !timedOut { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || sqlState == "25006" || sqlState.hasPrefix("57P0") || sqlState == "40001"
            || sqlState == "40P01"
    }

    /// The store's error for this failure: unreachable, timed out, busy, permission, ...
    var error: CredentialVaultError {
        if timedOut { return .timedOut }
        switch sqlState {
        case "57014"?: return .timedOut
        case "55P03"?: return .busy
        case let state? where state == "42501" || state.hasPrefix("28"):
            return .permissionDenied("the PostgreSQL role may not use the fleet store (SQLSTATE \(state)): grant it access to the schema")
        case let state? where state == "42P01" || state == "3F000" || state == "42883":
            return .notAvailable("no fleet store in this database and schema (SQLSTATE \(state)): run `credvault fleet init`")
        case "25006"?: return .notAvailable("the server is a read-only standby: give a read-write host (target_session_attrs=read-write)")
        case let state? where state.hasPrefix("53"):
            return .io("the PostgreSQL server is out of resources (SQLSTATE \(state))")
        case let state? where state.hasPrefix("08") || state.hasPrefix("57P"):
            return .notAvailable("the connection to PostgreSQL was lost (SQLSTATE \(state)); retry")
        case let state?:
            return .io("PostgreSQL refused a statement of the fleet store (SQLSTATE \(state))")
        case nil:
            return connectionLost ? .notAvailable("PostgreSQL: \(reason)") : .io("PostgreSQL: \(reason)")
        }
    }

    /// The error for a failed connect, from libpq's message: a refused password and a failed
    /// TLS verification say so plainly; a connect timeout is `timedOut`.
    static func connectError(_ message: String) -> CredentialVaultError {
        let text = sanitized(message)
        let lower = text.lowercased()
        if lower.contains("timeout expired") { return .timedOut }
        if lower.contains("password authentication failed") || lower.contains("no password supplied")
            || lower.contains("scram") && lower.contains("auth")
        {
            return .permissionDenied("PostgreSQL refused the password (scram-sha-256) for this role: check the password or passfile")
        }
        if lower.contains("certificate") || lower.contains("ssl") || lower.contains("tls") {
            return .permissionDenied("PostgreSQL TLS verification failed (sslmode verify-full needs the server's CA in sslrootcert): \(text)")
        }
        if lower.contains("permission denied") || lower.contains("pg_hba.conf") {
            return .permissionDenied("PostgreSQL refused the connection: \(text)")
        }
        return .notAvailable("cannot connect to PostgreSQL: \(text)")
    }

    /// libpq's message on one line, without control characters, at most 240 characters.
    static func sanitized(_ message: String) -> String {
        let flat = message.unicodeScalars.map { CredentialKey.hasControlCharacter(String($0)) ? " " : String($0) }.joined()
        let trimmed = flat.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return trimmed.count > 240 ? String(trimmed.prefix(240)) + "..." : trimmed
    }
}
