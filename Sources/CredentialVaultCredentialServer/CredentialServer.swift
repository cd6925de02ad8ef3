import CredentialVault
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Hands stored credentials to systemd units over an `AF_UNIX` socket: systemd connects when a
/// unit with `LoadCredential=NAME:/path/to/socket` starts, and gets the value mapped to `NAME`
/// for that unit (`CredentialMap`). The server behind `credvault serve-credentials`, for an
/// application that serves its own credentials (with the `ServiceLifecycle` trait, as a
/// `Service` of its `ServiceGroup`).
///
/// Who gets a value, whatever the configuration (none of these checks can be turned off):
/// - the socket is created mode 0600 in a directory that only this user or root owns and that
///   no one else can write, below directories that are the same or sticky, so no other user
///   can connect, or replace the socket with theirs;
/// - the connecting process must be root or this process's user (`SO_PEERCRED`);
/// - it must have bound systemd's abstract address naming the unit and the credential, and the
///   map must answer that credential for that unit;
/// - a credential mapped to some units only goes to a process whose cgroup is that unit's (the
///   address is a claim anyone who may connect can make; the cgroup is read through a pidfd).
///
/// Anything else is refused: the connection is closed without a byte, and the refusal logged.
/// Values are read from the store at each request (a rotated credential is served at once),
/// written without blocking (a client that does not read cannot hold the others up, and is
/// dropped after `clientTimeout`), then wiped; they are never logged.
public final class CredentialServer: Sendable {
    /// What a server serves, where, and its limits.
    public struct Configuration: Sendable {
        /// The socket's path (1 to 107 bytes): what `LoadCredential=NAME:PATH` names.
        public var socketPath: String
        /// Which credential answers which name, for which units.
        public var credentials: CredentialMap
        /// How long a client may take to read its value before it is dropped (0.01 to 300 s,
        /// default 5 s).
        public var clientTimeout: Duration
        /// How many clients are answered at once; more wait in the listen backlog (default 64).
        public var maximumClients: Int

        /// A configuration.
        public init(socketPath: String, credentials: CredentialMap, clientTimeout: Duration = .seconds(5), maximumClients: Int = 64) {
            self.socketPath = socketPath
            self.credentials = credentials
            self.clientTimeout = clientTimeout
            self.maximumClients = maximumClients
        }
    }

    /// The configuration it serves.
    public let configuration: Configuration
    private let socket: ListeningSocket
    private let store: ReopeningStore
    private let log: @Sendable (String) -> Void
    /// Set by the first run: a server serves once (its socket is removed when that run ends).
    private let started = Atomic(false)

    /// Listens at `configuration.socketPath` (connections wait in the backlog until `run`).
    /// - Parameters:
    ///   - store: where the values are read, at each request.
    ///   - reopen: opens the store again, for when it answers `reopenRequired` (another process
    ///     rotated the vault's key or replaced it) or `io` (its file was removed); `nil`: those
    ///     answers refuse the request. Returning `nil` means the vault is gone.
    ///   - log: each connection served or refused, and why (for an operator's log; credential
    ///     and unit names appear, values never).
    /// - Throws: `invalidArgument` (a bad path, timeout or limit, something else at the path),
    ///   `permissionDenied` (a directory on the path others could write or that is another
    ///   user's), `busy` (a server is listening at the path), `io`.
    public init(
        configuration: Configuration, store: any TokenStorageAdapter,
        reopen: (@Sendable () throws -> (any TokenStorageAdapter)?)? = nil, log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(CredentialVaultError) {
        guard (Duration.milliseconds(10) ... .seconds(300)).contains(configuration.clientTimeout) else {
            throw .invalidArgument("the client timeout must be 0.01 to 300 seconds")
        }
        guard (1...4096).contains(configuration.maximumClients) else { throw .invalidArgument("the maximum of clients must be 1 to 4096") }
        self.configuration = configuration
        self.socket = try ListeningSocket(path: configuration.socketPath)
        self.store = ReopeningStore(store, open: reopen)
        self.log = log
    }

    deinit {
        socket.close()
    }

    /// Serves on the calling thread until `stop` says so, then removes the socket and returns.
    /// Throws `invalidArgument` when this server already ran or `stop` was given to another
    /// server's run (one stop per server, see `Stop`), `io` when it cannot wait for connections.
    @available(*, noasync, message: "blocks its thread while it serves: use the async run(until:)")
    public func run(until stop: Stop) throws(CredentialVaultError) {
        try serve(until: stop)
    }

    /// Serves on a thread of its own (never one of Swift's cooperative pool) until `stop` says
    /// so, or the calling task is cancelled (an immediate stop); the socket is removed before
    /// it returns. Throws like the blocking `run(until:)`.
    public func run(until stop: Stop) async throws(CredentialVaultError) {
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CredentialVaultError?, Never>) in
                let threadStarted = PlainThread.start { [self] in
                    do throws(CredentialVaultError) {
                        try serve(until: stop)
                        continuation.resume(returning: nil)
                    } catch {
                        continuation.resume(returning: error)
                    }
                }
                if !threadStarted { continuation.resume(returning: .io("cannot start the credential server's thread")) }
            }
        } onCancel: {
            stop.stopNow()
        }
        if let outcome { throw outcome }
    }

    private func serve(until stop: Stop) throws(CredentialVaultError) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            throw .invalidArgument("this credential server has already run: make another")
        }
        defer { socket.close() }
        guard stop.claim() else {
            throw .invalidArgument("this stop already stops another server: give each server a Stop of its own")
        }
        try ServingLoop(
            socket: socket, map: configuration.credentials, store: store, clientTimeout: configuration.clientTimeout,
            maxClients: configuration.maximumClients, log: log
        ).run(until: stop)
    }
}
