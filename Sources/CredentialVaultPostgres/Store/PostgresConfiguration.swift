import CredentialVault
import Foundation
import Logging

/// How a `PostgresStore` reaches its database, and its deadlines.
///
/// The connection string is libpq's (`host=a,b port=5432,5432 dbname=fleet sslmode=verify-full
/// sslrootcert=/etc/ssl/fleet-ca.pem target_session_attrs=read-write`) or a URL
/// (`postgresql://user@db.example/fleet?sslmode=verify-full`). Put the password in a passfile
/// (`passfile=`, `PGPASSFILE`) or in `password`, rather than in the string: a string is often
/// written on a command line, where every local user can read it. `connect_timeout` in the
/// string is overridden by `connectTimeout`.
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// libpq connection string or URL.
    public var connectionString: String
    /// The role's password, when it comes from elsewhere than the string or a passfile (a
    /// password file of the caller's): given to libpq as a keyword of its own, which overrides
    /// the string's. Kept in memory as the string is; never in a message.
    public var password: String?
    /// The schema holding the store's tables (a plain lowercase identifier): several stores
    /// can share one database.
    public var schema: String
    /// Bound on each connect attempt, per host tried (libpq counts whole seconds, at least 2).
    public var connectTimeout: Duration
    /// Bound on each statement, enforced by the server (`statement_timeout`, `lock_timeout` for
    /// row locks) and, a second later, by the client (a hung server or network).
    public var statementTimeout: Duration
    /// How long `withExclusiveAccess` waits for the fleet-wide lock before `busy`.
    public var exclusiveAccessTimeout: Duration
    /// How long a cached read may be served without asking the server whether the store changed
    /// (the staleness bound of reads, see docs/FLEET.md). `.zero` disables the cache.
    public var freshnessInterval: Duration
    /// Whether a thread with its own connection LISTENs for changes and expires the cache at
    /// once (a hint that shortens staleness in the common case; the interval is the bound).
    public var listensForChanges = true
    /// How many times an operation is retried on a new connection after a lost connection or a
    /// failover (with a short backoff: 50 ms, doubling).
    public var reconnectAttempts: Int
    /// The source of "now" for ephemeral expiry and metadata dates.
    public var clock: any CredentialClock
    /// How many threads (each with its connection) serve the async API at most.
    public var threads: Int
    /// Accepts a TCP connection weaker than `sslmode=verify-full` (`disable`, `allow`,
    /// `prefer`, `require`, `verify-ca`), which `validate` otherwise refuses: a man in the middle
    /// could read and change the rows and learn a password. Show `transportWarning` when set.
    /// A string that names no `sslmode` gets `verify-full` over TCP; a Unix-domain socket
    /// needs nothing.
    public var insecureTransport = false
    /// Where this host remembers the newest state (key epoch and generation) of each fleet store
    /// it has seen, to refuse an older copy of the database put back (`rolledBack`): the host
    /// state directory, beside the sealed file's rollback counters (default
    /// `$XDG_STATE_HOME/credential-vault`). `nil` remembers within the process only.
    public var stateDirectory: URL? = XDGDirectories.state.appendingPathComponent("credential-vault")
    /// Where the store logs its decisions (default: nowhere). At `info`: a completed key
    /// rotation, the change listener's reconnect; at `warning`: a connection lost or refused
    /// and retried, data refused as tampered with, damaged or an older copy (`rolledBack`), a
    /// deadline passed (`timedOut`). Records have `category: fleet` and never show a
    /// credential's name or value, a host secret, a password or the connection string.
    public var logger: Logger = .credentialVaultSilent
    /// Where the store counts retries, rotations, timeouts and refusals (trait `Metrics`).
    package var metrics = VaultMetrics()

    /// A configuration with the defaults: schema `credvault`, connect 5 s, statements 5 s,
    /// exclusive access 10 s, freshness 1 s, 3 reconnect attempts, 4 threads.
    public init(
        connectionString: String, schema: String = "credvault", connectTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(5), exclusiveAccessTimeout: Duration = .seconds(10),
        freshnessInterval: Duration = .seconds(1), reconnectAttempts: Int = 3, clock: any CredentialClock = SystemClock(),
        threads: Int = 4
    ) {
        self.connectionString = connectionString
        self.schema = schema
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.exclusiveAccessTimeout = exclusiveAccessTimeout
        self.freshnessInterval = freshnessInterval
        self.reconnectAttempts = reconnectAttempts
        self.clock = clock
        self.threads = threads
    }

    /// Throws `invalidArgument` for values the store cannot honour (out-of-range deadlines, a
    /// schema name that is not a plain identifier, a NUL in the connection string, a connection
    /// string libpq cannot parse: its message never repeats the string).
    public func validate() throws(CredentialVaultError) {
        guard !connectionString.isEmpty, !connectionString.utf8.contains(0) else {
            throw .invalidArgument("the PostgreSQL connection string must be non-empty and without NUL")
        }
        try TransportSecurity(ConnectionString(connectionString)).check(allowed: insecureTransport)
        guard !(password?.utf8.contains(0) ?? false) else { throw .invalidArgument("the PostgreSQL password must be without NUL") }
        guard Self.isIdentifier(schema) else {
            throw .invalidArgument("the fleet schema name must be a lowercase identifier (a-z, 0-9, _; at most 48 characters)")
        }
        guard connectTimeout >= .seconds(1), connectTimeout <= .seconds(300) else {
            throw .invalidArgument("the connect timeout must be between 1 s and 300 s")
        }
        for (name, value) in [("statement", statementTimeout), ("exclusive access", exclusiveAccessTimeout)] {
            guard value >= .milliseconds(10), value <= .seconds(3600) else {
                throw .invalidArgument("the \(name) timeout must be between 10 ms and 1 hour")
            }
        }
        guard freshnessInterval >= .zero, freshnessInterval <= .seconds(3600) else {
            throw .invalidArgument("the freshness interval must be between 0 and 1 hour")
        }
        guard (0...10).contains(reconnectAttempts) else { throw .invalidArgument("reconnect attempts must be 0...10") }
        guard (1...64).contains(threads) else { throw .invalidArgument("threads must be 1...64") }
    }

    /// libpq's whole seconds (rounded up; at least 2, since libpq reads 1 as 2).
    var connectTimeoutSeconds: Int {
        let parts = connectTimeout.components
        return max(2, Int(parts.seconds) + (parts.attoseconds > 0 ? 1 : 0))
    }

    /// The server's `lock_timeout` for row and table locks: four fifths of the statement
    /// timeout, so that a statement waiting for another session's lock ends with `busy` (SQLSTATE
    /// 55P03) before the statement timeout would end it with `timedOut`.
    var lockTimeout: Duration { statementTimeout * 4 / 5 }

    static func isIdentifier(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...48).contains(bytes.count), let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) || first == UInt8(ascii: "_")
        else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }

    /// Whether the connection string holds a password (`password=` or a URL's `user:password@`),
    /// which a command line should not: every local user can read a process's arguments.
    /// `false` for a string libpq cannot parse (`validate` refuses it).
    public var connectionStringHoldsPassword: Bool {
        (try? ConnectionString(connectionString))?.password != nil
    }

    /// What the connection exposes when it is weaker than a verified TLS connection over TCP
    /// (allowed by `insecureTransport`), to be shown as a warning; `nil` otherwise (and for a
    /// string libpq cannot parse: `validate` refuses it).
    public var transportWarning: String? {
        (try? ConnectionString(connectionString)).flatMap { TransportSecurity($0).warning }
    }

    /// Redacted: the connection string may hold a password.
    public var description: String { "PostgresConfiguration(schema: \(schema), connection: redacted)" }
}
