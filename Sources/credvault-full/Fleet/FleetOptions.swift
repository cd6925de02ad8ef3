import CredentialVault
import CredentialVaultCLI
import CredentialVaultPostgres
import Foundation

/// How the command line reaches the fleet store: `--postgres URL` (or `$CREDVAULT_POSTGRES`),
/// `--fleet-schema`, this host's name and its key.
enum FleetOptions {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The store's configuration from the options. A password in `--postgres` is refused:
    /// every local user can read a process's arguments (`ps`, /proc/PID/cmdline).
    static func configuration(_ args: ParsedArguments) throws -> PostgresConfiguration {
        guard let url = args.options["postgres"] ?? environment["CREDVAULT_POSTGRES"], !url.isEmpty else {
            throw UsageError("give the fleet store's connection string with --postgres URL or $CREDVAULT_POSTGRES")
        }
        var configuration = PostgresConfiguration(
            connectionString: url, schema: args.options["fleet-schema"] ?? environment["CREDVAULT_FLEET_SCHEMA"] ?? "credvault")
        if args.options["postgres"] != nil, configuration.connectionStringHoldsPassword {
            throw UsageError(
                "--postgres holds a password, which every local user can read in this command line (ps, /proc/PID/cmdline): "
                    + "give it with --postgres-password-file PATH, a passfile (PGPASSFILE, or passfile= in the string), or put "
                    + "the connection string in $CREDVAULT_POSTGRES; and change that password")
        }
        if let path = args.options["postgres-password-file"] {
            configuration.password = try SecretReader.text(fromFile: path, what: "PostgreSQL password")
        }
        configuration.insecureTransport = args.flags.contains("insecure-transport")
        try configuration.validate()
        if let warning = configuration.transportWarning { TerminalIO().error("warning: " + warning) }
        // A command lives for a few round trips: a LISTEN connection would only cost the
        // server a connection (50 concurrent commands would hold 50 more).
        configuration.listensForChanges = false
        return configuration
    }

    /// This host's name: `--fleet-host`, `$CREDVAULT_FLEET_HOST`, else the machine's host name.
    static func host(_ args: ParsedArguments) -> String {
        if let name = args.options["fleet-host"] ?? environment["CREDVAULT_FLEET_HOST"] { return name }
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This host's key: `--fleet-private-key` or `$CREDVAULT_FLEET_PRIVATE_KEY` (enrolled by its
    /// public key), `--fleet-key-file`, `--fleet-passphrase-file` or `$CREDVAULT_FLEET_KEY_FILE`,
    /// else the common `--key-file`, `--passphrase-file` or `--ask-passphrase`.
    static func hostKey(_ args: ParsedArguments) throws -> FleetHostSecret {
        if args.flags.contains("fleet-device-key") {
            // This machine's key pair, under the custody `--custody` names (file by default).
            let configuration = try VaultOptions.configuration(args)
            let custody = try VaultOptions.custody(args)
            let custodian = configuration.custodians.first { $0.custody == custody }
            guard custody == .file || custodian != nil else { throw UsageError("--custody \(custody.name) is not available here") }
            return .device(try configuration.device ?? DeviceIdentity.current(), custodian: custodian)
        }
        if let path = args.options["fleet-private-key"] ?? environment["CREDVAULT_FLEET_PRIVATE_KEY"] {
            return .keyPair(URL(fileURLWithPath: path))
        }
        if let path = args.options["fleet-key-file"] ?? environment["CREDVAULT_FLEET_KEY_FILE"] {
            return .keyFile(URL(fileURLWithPath: path))
        }
        if let path = args.options["fleet-passphrase-file"] {
            guard case .passphrase(let bytes) = try VaultOptions.passphrase(fromFile: path) else {
                throw UsageError("--fleet-passphrase-file did not give a passphrase")
            }
            return .passphrase(bytes)
        }
        switch try VaultOptions.explicitKey(args) {
        case .keyFile(let url)?: return .keyFile(url)
        case .passphrase(let bytes)?: return .passphrase(bytes)
        case .device?, nil:
            throw UsageError(
                "the fleet store is unlocked with this host's --key-file or --passphrase-file (a device key cannot be shared by hosts)")
        }
    }

    /// Opens the fleet store as this host.
    static func open(_ args: ParsedArguments) throws -> PostgresStore {
        try PostgresStore.open(configuration(args), host: host(args), secret: hostKey(args))
    }
}

extension SecretServiceBackends {
    /// `--backend postgres`: the fleet store.
    func openPostgres(_ args: ParsedArguments) throws -> any TokenStorageBackend { try FleetOptions.open(args) }

    /// The fleet store's conditions in its own words (a rotated key, one row changed, a lock).
    func describeFleetError(_ error: CredentialVaultError) -> String? { PostgresStore.describe(error) }
}
