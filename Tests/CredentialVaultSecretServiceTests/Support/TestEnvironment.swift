import CredentialVaultSecretService
import Foundation
import Testing

/// Where the Secret Service tests run and what they may use.
enum TestEnvironment {
    static let environment = ProcessInfo.processInfo.environment

    /// The per-operation timeout of the tests' stores and probes on the shared test bus: a
    /// minute, which gnome-keyring meets while every test of a parallel run talks to it on a
    /// loaded machine (the default 5 s is not). A test of a deadline sets its own.
    static let timeout = Duration.seconds(60)

    /// `timeout` in milliseconds, for `secret-service-probe --timeout-ms`.
    static var timeoutMilliseconds: Int { Int(timeout.components.seconds) * 1000 }

    /// What a `credvault` child on the shared test bus inherits: a wait per Secret Service call
    /// as generous as `timeout` (the CLI's default is 5 s), as no test of such a child is about
    /// that deadline.
    static let cliEnvironment: [String: String?] = ["CREDVAULT_SECRET_SERVICE_TIMEOUT": "120"]

    /// A store of the default (CLI's) namespace on the shared test bus, with `timeout`.
    static func unscopedStore() -> SecretServiceStore { SecretServiceStore(configuration: SecretServiceConfiguration(timeout: timeout)) }

    /// The tests that write to a keyring run only inside the private bus that
    /// `scripts/with-keyring.sh` sets up (it sets `CREDVAULT_TEST_KEYRING=unlocked`), never
    /// against a developer's own keyring.
    static var isPrivateUnlockedBus: Bool {
        environment["CREDVAULT_TEST_KEYRING"] == "unlocked" && environment["DBUS_SESSION_BUS_ADDRESS"] != nil
    }

    /// The package's root directory (this file is Tests/CredentialVaultSecretServiceTests/Support/...).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `scripts/with-keyring.sh`, which makes the throw-away buses of the failure tests.
    static var withKeyringScript: URL { packageRoot.appendingPathComponent("scripts/with-keyring.sh") }

    /// The `secret-service-probe` executable, built next to the test bundle.
    static var probe: URL {
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return bundle.deletingLastPathComponent().appendingPathComponent("secret-service-probe")
    }

    /// The `credvault` executable, built next to the test bundle.
    static var credvault: URL { probe.deletingLastPathComponent().appendingPathComponent("credvault") }

    /// Whether an executable named `name` is on the PATH.
    static func hasTool(_ name: String) -> Bool {
        (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }

    /// The failure tests make their own buses: they need dbus-run-session and gnome-keyring.
    static var canMakeBuses: Bool {
        hasTool("dbus-run-session") && hasTool("dbus-send") && hasTool("gnome-keyring-daemon")
            && FileManager.default.isExecutableFile(atPath: withKeyringScript.path)
    }

    /// A Python with the `keyring` package, from the venv that `scripts/services/python-keyring.sh` makes.
    static var pythonWithKeyring: String? {
        guard let path = environment["CREDVAULT_TEST_PYTHON_KEYRING"], FileManager.default.isExecutableFile(atPath: path) else {
            return nil
        }
        return path
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs only inside the private, unlocked test bus of `scripts/with-keyring.sh`.
    static var privateKeyring: Self {
        .enabled(
            if: TestEnvironment.isPrivateUnlockedBus,
            "needs the private gnome-keyring bus: run scripts/test.sh (or scripts/with-keyring.sh swift test)")
    }

    /// Runs only where `scripts/with-keyring.sh` can make throw-away buses.
    static var throwAwayBuses: Self {
        .enabled(
            if: TestEnvironment.canMakeBuses,
            "needs dbus-run-session, dbus-send and gnome-keyring-daemon: run scripts/install-deps.sh secret-service")
    }

    /// Runs only when `secret-tool` is installed (and inside the private bus).
    static var secretTool: Self {
        .enabled(if: TestEnvironment.hasTool("secret-tool"), "needs secret-tool: run scripts/install-deps.sh secret-service")
    }

    /// Runs only when the Python keyring venv is there (scripts/test.sh makes it).
    static var pythonKeyring: Self {
        .enabled(
            if: TestEnvironment.pythonWithKeyring != nil,
            "needs CREDVAULT_TEST_PYTHON_KEYRING (a Python with keyring): run scripts/test.sh, which makes the venv")
    }
}
