import CredentialVaultCLI
import Foundation

/// How long `credvault` waits for the Secret Service provider per call: 5 s, or
/// `$CREDVAULT_SECRET_SERVICE_TIMEOUT` seconds (1 to 3600) for a provider that answers slowly
/// (a busy machine, a provider just resumed). A value that is not such a number is a usage error,
/// never silently the default.
enum SecretServiceTimeout {
    static let variable = "CREDVAULT_SECRET_SERVICE_TIMEOUT"

    static func current(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Duration {
        guard let text = environment[variable] else { return .seconds(5) }
        guard let seconds = Int(text), (1...3600).contains(seconds) else {
            throw UsageError("$\(variable) is a number of seconds from 1 to 3600")
        }
        return .seconds(seconds)
    }
}
