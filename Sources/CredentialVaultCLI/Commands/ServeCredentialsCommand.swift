import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `credvault serve-credentials --socket PATH --map CREDNAME=SERVICE/ACCOUNT[,UNIT]...`: hands
/// stored credentials to systemd units through `LoadCredential=CREDNAME:PATH` (see
/// `CredentialServer`, of the CredentialVaultCredentialServer library).
package enum ServeCredentialsCommand: Command {
    package static let name = "serve-credentials"
    package static let summary = "serve credentials to systemd units (LoadCredential=NAME:SOCKET)"
    package static let help = """
        usage: credvault serve-credentials --socket PATH --map CREDNAME=SERVICE/ACCOUNT[,UNIT]...
                                           [--map ...] [--client-timeout SECONDS] [common options]

        Listens on the AF_UNIX socket PATH (created mode 0600; its directory must be writable by
        no one else) for systemd, which connects when a unit with
            LoadCredential=CREDNAME:PATH
        starts, from an abstract address naming the unit and the credential. The value of the
        mapped credential is written and the connection closed; a credential or unit that is not
        mapped, a client that is not root or this user, or one without systemd's address gets
        nothing. Every connection is logged on stderr (never a value). Runs until SIGTERM,
        SIGINT or SIGHUP, then stops accepting, finishes writing to the clients being answered
        (each within the client timeout) and removes the socket. Tells systemd when it listens (Type=notify,
        $NOTIFY_SOCKET).
          --map CREDNAME=SERVICE/ACCOUNT[,UNIT]...
                                 the credential CREDNAME is SERVICE/ACCOUNT in the store (split at
                                 the last '/', as for exec: a / in the account is written %2F, a
                                 % in either name %25), for the units listed (none: for every
                                 unit); repeat --map for more credentials
          --client-timeout S     how long a client may take to read its value (default 5, 0.01
                                 to 300 seconds)

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = ["socket", "map", "client-timeout"]

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        guard let path = args.options["socket"] else { throw UsageError("give --socket PATH") }
        let map = try CredentialMap(args.optionValues["map"] ?? [])
        let timeout = try clientTimeout(args.options["client-timeout"])
        // First, before any other thread exists (see `StopSignals`).
        let stop = CredentialServer.Stop(readingFrom: try StopSignals.install())
        guard let store = try vault.openStore(create: false) else {
            io.error("no vault at \(vault.request.vaultURL.path): store the credentials first")
            return ExitCode.notFound
        }
        for entry in map.entries where try store.metadata(for: entry.key) == nil {
            io.error("serve-credentials: warning: no credential \(entry.key) is stored yet (\(entry.credential) is refused until it is)")
        }
        // Opened again while serving, never with a prompt: a passphrase asked for at the
        // terminal (--ask-passphrase) would hold every client up until someone typed it.
        let typedAtStart = args.flags.contains("ask-passphrase")
        let reopen: @Sendable () throws -> (any TokenStorageAdapter)? = {
            guard !typedAtStart else {
                throw CredentialVaultError.notAvailable(
                    "the vault changed (rotated, re-keyed or replaced) since its passphrase was typed at this server's start, "
                        + "and the server never asks for it while serving: start serve-credentials again")
            }
            return try vault.openStore(create: false)
        }
        let configuration = CredentialServer.Configuration(socketPath: path, credentials: map, clientTimeout: timeout)
        guard let server = try listen(configuration, store: store, reopen: reopen, io) else { return ExitCode.busy }
        io.error("serve-credentials: listening on \(path) (\(map.entries.count) mapped)")
        if let failure = ServiceNotification.ready() { io.error("serve-credentials: \(failure)") }
        try server.run(until: stop)
        io.error("serve-credentials: stopped")
        return ExitCode.success
    }

    /// The server listening at the configured path; `nil` when another server already listens
    /// there, said on stderr (`busy` on its own speaks of the vault's lock, which is not what is
    /// busy here).
    private static func listen(
        _ configuration: CredentialServer.Configuration, store: any TokenStorageAdapter,
        reopen: @escaping @Sendable () throws -> (any TokenStorageAdapter)?, _ io: TerminalIO
    ) throws(CredentialVaultError) -> CredentialServer? {
        do {
            return try CredentialServer(configuration: configuration, store: store, reopen: reopen) { io.error("serve-credentials: \($0)") }
        } catch {
            guard error == .busy else { throw error }
            io.error("serve-credentials: another server is already listening on \(configuration.socketPath): stop it, or give this one another --socket")
            return nil
        }
    }

    private static func clientTimeout(_ text: String?) throws(UsageError) -> Duration {
        guard let text else { return .seconds(5) }
        guard let seconds = Double(text), seconds.isFinite, (0.01...300).contains(seconds) else {
            throw UsageError("--client-timeout takes 0.01 to 300 seconds")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
