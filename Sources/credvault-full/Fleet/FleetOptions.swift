import CredentialVault
import CredentialVaultCLI
import CredentialVaultPostgres
import Foundation

/// How the command line reaches the fleet store: `--postgres URL` (or `$CREDVAULT_POSTGRES`),
/// `--fleet-schema`, this host's name and its key (`FleetRequest`).
enum FleetOptions {
    /// The store's configuration from the options. A password in `--postgres` is refused:
    /// every local user can read a process's arguments (`ps`, /proc/PID/cmdline).
    static func configuration(_ vault: VaultAccess) throws -> PostgresConfiguration {
        let fleet = vault.request.fleet
        guard let url = fleet.connectionString, !url.isEmpty else {
            throw UsageError("give the fleet store's connection string with --postgres URL or $CREDVAULT_POSTGRES")
        }
        var configuration = PostgresConfiguration(connectionString: url, schema: fleet.schema)
        if fleet.connectionStringIsArgument, configuration.connectionStringHoldsPassword {
            throw UsageError(
                "--postgres holds a password, which every local user can read in this command line (ps, /proc/PID/cmdline): "
                    + "give it with --postgres-password-file PATH, a passfile (PGPASSFILE, or passfile= in the string), or put "
                    + "the connection string in $CREDVAULT_POSTGRES; and change that password")
        }
        if let path = fleet.passwordFile {
            configuration.password = try SecretReader.text(fromFile: path, what: "PostgreSQL password")
        }
        configuration.insecureTransport = fleet.insecureTransport
        try configuration.validate()
        if let warning = configuration.transportWarning { TerminalIO().error("warning: " + warning) }
        // A command lives for a few round trips: a LISTEN connection would only cost the
        // server a connection (50 concurrent commands would hold 50 more).
        configuration.listensForChanges = false
        return configuration
    }

    /// This host's name: `--fleet-host`, `$CREDVAULT_FLEET_HOST`, else the machine's host name.
    static func host(_ vault: VaultAccess) -> String {
        if let name = vault.request.fleet.host { return name }
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This host's key: `--fleet-private-key` or `$CREDVAULT_FLEET_PRIVATE_KEY` (enrolled by its
    /// public key), `--fleet-key-file`, `--fleet-passphrase-file` or `$CREDVAULT_FLEET_KEY_FILE`,
    /// else the common `--key-file`, `--passphrase-file` or `--ask-passphrase`.
    static func hostKey(_ vault: VaultAccess) throws -> FleetHostSecret {
        let fleet = vault.request.fleet
        if fleet.deviceKey {
            // This machine's key pair, under the custody `--custody` names (file by default).
            let configuration = try vault.configuration()
            let custody = try vault.request.custody()
            let custodian = configuration.custodians.first { $0.custody == custody }
            guard custody == .file || custodian != nil else { throw UsageError("--custody \(custody.name) is not available here") }
            return .device(try configuration.device ?? DeviceIdentity.current(), custodian: custodian)
        }
        if let path = fleet.privateKeyFile {
            return .keyPair(URL(fileURLWithPath: path))
        }
        if let path = fleet.keyFile {
            return .keyFile(URL(fileURLWithPath: path))
        }
        if let path = fleet.passphraseFile {
            guard case .passphrase(let bytes) = try SecretReader.passphrase(fromFile: path) else {
                throw UsageError("--fleet-passphrase-file did not give a passphrase")
            }
            return .passphrase(bytes)
        }
        switch try vault.request.unlock.explicitKey() {
        case .keyFile(let url)?: return .keyFile(url)
        case .passphrase(let bytes)?: return .passphrase(bytes)
        case .device?, nil:
            throw UsageError(
                "the fleet store is unlocked with this host's --key-file or --passphrase-file (a device key cannot be shared by hosts)")
        }
    }

    /// Opens the fleet store as this host.
    static func open(_ vault: VaultAccess) throws -> PostgresStore {
        try PostgresStore.open(configuration(vault), host: host(vault), secret: hostKey(vault))
    }
}

extension FullBackends {
    /// `--backend postgres`: the fleet store.
    func openPostgres(_ vault: VaultAccess) throws -> any TokenStorageBackend { try FleetOptions.open(vault) }

    /// The fleet store's conditions in its own words (a rotated key, one row changed, a lock).
    func describeFleetError(_ error: CredentialVaultError) -> String? { PostgresStore.describe(error) }
}
