import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// The Secret Service providers the backend is tested against, each on a private bus:
/// gnome-keyring is the test process's own session bus (`scripts/with-keyring.sh`), KeePassXC
/// and KWallet each have a bus of their own, started for the whole run by
/// `scripts/services/secret-service-providers.sh` (which prints `CREDVAULT_TEST_KEEPASSXC_BUS`
/// and `CREDVAULT_TEST_KWALLET_BUS`). Tests on these shared instances use names of their own;
/// tests that lock, stop or kill a provider start an instance of their own (`ProviderInstance`).
enum Provider: String, CaseIterable, Sendable, CustomStringConvertible {
    case gnomeKeyring = "gnome-keyring"
    case keepassxc
    case kwallet

    var description: String { rawValue }

    /// What the backend should identify it as.
    var identified: SecretServiceProvider {
        switch self {
        case .gnomeKeyring: .gnomeKeyring
        case .keepassxc: .keePassXC
        case .kwallet: .kwallet
        }
    }

    /// The bus address of the shared instance; `nil` for gnome-keyring (the session bus).
    var sharedBus: String? {
        switch self {
        case .gnomeKeyring: nil
        case .keepassxc: TestEnvironment.environment["CREDVAULT_TEST_KEEPASSXC_BUS"]
        case .kwallet: TestEnvironment.environment["CREDVAULT_TEST_KWALLET_BUS"]
        }
    }

    /// Whether the shared instance is there.
    var isRunning: Bool {
        self == .gnomeKeyring ? TestEnvironment.isPrivateUnlockedBus : sharedBus != nil
    }

    /// Whether an instance of its own can be started (`with-provider.sh` and the provider's program).
    var canStart: Bool {
        let program =
            switch self {
            case .gnomeKeyring: "gnome-keyring-daemon"
            case .keepassxc: "keepassxc"
            case .kwallet: "kwalletd5"
            }
        return TestEnvironment.hasTool(program) && TestEnvironment.hasTool("busctl") && TestEnvironment.hasTool("dbus-daemon")
    }

    /// The configuration of a store on the shared instance, with the tests' generous
    /// per-call timeout unless a test of a deadline gives its own.
    func configuration(prefix: String = "", clock: any CredentialClock = SystemClock(), timeout: Duration = TestEnvironment.timeout)
        -> SecretServiceConfiguration
    {
        SecretServiceConfiguration(timeout: timeout, serviceNamePrefix: prefix, clock: clock, busAddress: sharedBus)
    }

    /// The environment of a child process (`credvault`, `secret-tool`) on the shared instance.
    var childEnvironment: [String: String?] {
        sharedBus.map { ["DBUS_SESSION_BUS_ADDRESS": $0] } ?? [:]
    }

    /// Whether it has a `session` collection (ephemeral credentials).
    var hasSessionCollection: Bool { self == .gnomeKeyring }

    /// The conformance suite's difficult names it refuses (`unsupported`, nothing stored):
    /// KeePassXC matches a name ending in a line feed as the name without it, so the backend
    /// refuses such names there; the others store every name exactly.
    var refusedNames: Set<String> { self == .keepassxc ? ["\n", "\r\n"] : [] }
}

extension Trait where Self == ConditionTrait {
    /// Runs only when `provider`'s shared test instance is there.
    static func sharedProvider(_ provider: Provider) -> Self {
        .enabled(
            if: provider.isRunning,
            "needs the shared \(provider) test instance: run scripts/test.sh (scripts/services/secret-service-providers.sh starts it)")
    }

    /// Runs only where an instance of `provider` of its own can be started.
    static func ownProvider(_ provider: Provider) -> Self {
        .enabled(
            if: provider.canStart,
            "needs \(provider), busctl and dbus-daemon: run scripts/install-deps.sh secret-service secret-service-providers")
    }
}
