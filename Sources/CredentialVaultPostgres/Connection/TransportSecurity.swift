import CredentialVault
import Foundation

/// How a connection string reaches its server, and whether that is safe enough by default.
///
/// Over TCP the fleet store requires `sslmode=verify-full` (TLS, the server's certificate
/// checked against the trusted CA and its name against the host): with anything weaker a man in
/// the middle reads and changes the rows (the powers of an administrator: deleting rows,
/// putting back older copies) and, with password authentication, learns the password. A string
/// that names no `sslmode` (nor `PGSSLMODE`) gets `verify-full`; a weaker one needs
/// `PostgresConfiguration.insecureTransport`. A Unix-domain socket (a host that is a directory,
/// or no host at all) is local: it needs nothing. A service (`service=`, `PGSERVICE`) names its
/// host in a file libpq reads at connect time, so it counts as TCP: the service file's own
/// `sslmode` (or its absence, libpq's `prefer`) never decides.
struct TransportSecurity: Sendable, Equatable {
    /// Whether some host may be reached over TCP (`hostaddr`, a host that is not a socket
    /// directory, or a service, whose file may name any host).
    let usesTCP: Bool
    /// The `sslmode` asked for (by the string or `PGSSLMODE`); `nil` when none was.
    let requestedMode: String?

    /// The modes weaker than `verify-full`, in libpq's words.
    static let weakerModes: Set<String> = ["disable", "allow", "prefer", "require", "verify-ca"]

    init(_ string: ConnectionString, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let hostaddr = string.transport["hostaddr"] ?? environment["PGHOSTADDR"] ?? ""
        let host = string.transport["host"] ?? environment["PGHOST"] ?? ""
        let viaAddress = hostaddr.split(separator: ",", omittingEmptySubsequences: false).contains { !$0.isEmpty }
        let viaName = host.split(separator: ",", omittingEmptySubsequences: false).contains { name in
            !name.isEmpty && !name.hasPrefix("/") && !name.hasPrefix("@")
        }
        // libpq fills what the string leaves out from the service file: its host may be TCP and
        // its sslmode anything, so the store decides the mode (its keyword wins over the file's).
        let viaService = !(string.transport["service"] ?? environment["PGSERVICE"] ?? "").isEmpty
        usesTCP = viaAddress || viaName || viaService
        let mode = string.transport["sslmode"] ?? environment["PGSSLMODE"]
        requestedMode = mode.map { $0.lowercased() }
    }

    /// The `sslmode` the store gives libpq when the string and the environment name none.
    var defaultedMode: String? { usesTCP && requestedMode == nil ? "verify-full" : nil }

    /// Whether the connection is weaker than a verified TLS connection over TCP.
    var isWeak: Bool { usesTCP && requestedMode.map { Self.weakerModes.contains($0) } ?? false }

    /// What a weak transport exposes (shown as a warning), or `nil`.
    var warning: String? {
        guard isWeak, let mode = requestedMode else { return nil }
        return "the fleet store connects to PostgreSQL over TCP with sslmode=\(mode), not verify-full: "
            + (mode == "verify-ca" ? "the server's name is not checked" : "the server is not authenticated (and the connection may not be encrypted)")
            + "; a man in the middle could read and change the rows and, with password authentication, learn the password"
    }

    /// Refuses a weak transport unless `allowed`.
    func check(allowed: Bool) throws(CredentialVaultError) {
        guard isWeak, !allowed, let mode = requestedMode else { return }
        throw .invalidArgument(
            "the fleet store connects over TCP only with sslmode=verify-full (TLS with the server's certificate and name verified; "
                + "give sslrootcert= for a private CA), not sslmode=\(mode): set PostgresConfiguration.insecureTransport "
                + "(credvault --insecure-transport) to accept a connection a man in the middle can read and change")
    }
}
