/// How the command line reaches the fleet store (`--backend postgres`, `credvault fleet`), as
/// given: `credvault-full`, which links the store, checks and uses it (`FleetOptions`).
package struct FleetRequest: Sendable {
    /// The connection string or URL: `--postgres`, else `$CREDVAULT_POSTGRES`.
    package var connectionString: String?
    /// Whether the connection string came from the command line (where a password in it is
    /// refused: every local user can read a command line).
    package var connectionStringIsArgument: Bool
    /// `--postgres-password-file`.
    package var passwordFile: String?
    /// `--insecure-transport`.
    package var insecureTransport: Bool
    /// The store's schema: `--fleet-schema`, else `$CREDVAULT_FLEET_SCHEMA`, else `credvault`.
    package var schema: String
    /// This host's name: `--fleet-host`, else `$CREDVAULT_FLEET_HOST` (`nil`: the machine's).
    package var host: String?
    /// `--fleet-device-key`: this host's key pair is this machine's.
    package var deviceKey: Bool
    /// This host's private key file: `--fleet-private-key`, else `$CREDVAULT_FLEET_PRIVATE_KEY`.
    package var privateKeyFile: String?
    /// This host's key file: `--fleet-key-file`, else `$CREDVAULT_FLEET_KEY_FILE`.
    package var keyFile: String?
    /// This host's passphrase file: `--fleet-passphrase-file`.
    package var passphraseFile: String?

    /// Reads the fleet options from `arguments` and `environment`.
    package init(_ arguments: ParsedArguments, environment: [String: String]) {
        let options = arguments.options
        connectionString = options["postgres"] ?? environment["CREDVAULT_POSTGRES"]
        connectionStringIsArgument = options["postgres"] != nil
        passwordFile = options["postgres-password-file"]
        insecureTransport = arguments.flags.contains("insecure-transport")
        schema = options["fleet-schema"] ?? environment["CREDVAULT_FLEET_SCHEMA"] ?? "credvault"
        host = options["fleet-host"] ?? environment["CREDVAULT_FLEET_HOST"]
        deviceKey = arguments.flags.contains("fleet-device-key")
        privateKeyFile = options["fleet-private-key"] ?? environment["CREDVAULT_FLEET_PRIVATE_KEY"]
        keyFile = options["fleet-key-file"] ?? environment["CREDVAULT_FLEET_KEY_FILE"]
        passphraseFile = options["fleet-passphrase-file"]
    }
}
