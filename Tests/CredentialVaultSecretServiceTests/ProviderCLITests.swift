import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The same `credvault` checks against every Secret Service provider (gnome-keyring, KeePassXC,
/// KWallet), each on a private bus: store, lookup, `--take`, list (of one service and of
/// everything), delete, binary values, ephemeral credentials, `info`, the automatic choice,
/// `secret-tool` both ways, and, on an instance of the check's own, a locked collection and a
/// provider stopped (SIGSTOP) or killed (SIGKILL).
@Suite(.ownThread) struct ProviderCLITests {
    @Test(.sharedProvider(.gnomeKeyring), .ownProvider(.gnomeKeyring), arguments: ProviderCheck.allCases)
    func gnomeKeyring(_ check: ProviderCheck) throws { try check.run(on: .gnomeKeyring) }

    @Test(.sharedProvider(.keepassxc), .ownProvider(.keepassxc), arguments: ProviderCheck.allCases)
    func keepassxc(_ check: ProviderCheck) throws { try check.run(on: .keepassxc) }

    @Test(.sharedProvider(.kwallet), .ownProvider(.kwallet), arguments: ProviderCheck.allCases)
    func kwallet(_ check: ProviderCheck) throws { try check.run(on: .kwallet) }
}

/// One check of `ProviderCLITests`.
enum ProviderCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    case storeAndLookup, binaryValue, lookupTake, listOneService, listEverything, delete, ephemeral, info, automaticChoice
    case secretToolWritesCredvaultReads, credvaultWritesSecretToolReads
    case lockedCollection, stoppedProvider, killedProvider

    var description: String { rawValue }

    func run(on provider: Provider) throws {
        let cli = try ProviderCLI(provider)
        defer { cli.cleanUp() }
        let service = cli.service
        let value = Data("token-\(UUID().uuidString.prefix(6))".utf8)
        switch self {
        case .storeAndLookup:
            let stored = try cli.credvault(["store", service, "alice"], stdin: value)
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(try cli.credvault(["lookup", service, "alice"]).stdout == value)
            #expect(try cli.store.load(CredentialKey(service: service, account: "alice")) == value)
        case .binaryValue:
            let binary = Data([0x68, 0x69, 0x00, 0xFF, 0x0A, 0x00])
            #expect(try cli.credvault(["store", service, "bin"], stdin: binary).status == 0)
            #expect(try cli.credvault(["lookup", service, "bin"]).stdout == binary)
        case .lookupTake:
            #expect(try cli.credvault(["store", service, "once"], stdin: value).status == 0)
            #expect(try cli.credvault(["lookup", service, "once", "--take"]).stdout == value)
            #expect(try cli.credvault(["lookup", service, "once"]).status == 1)
        case .listOneService:
            for account in ["b", "a"] {
                let stored = try cli.credvault(["store", service, account], stdin: value)
                #expect(stored.status == 0, "\(stored.status): \(stored.stderr)")
            }
            #expect(try cli.credvault(["list", "--service", service]).stdoutText == "\(service)\ta\n\(service)\tb\n")
        case .listEverything:
            // An empty search (KeePassXC answers it with nothing: the backend lists the
            // collection's items instead); other tests' items may be listed too.
            #expect(try cli.credvault(["store", service, "a"], stdin: value).status == 0)
            let listed = try cli.credvault(["list"])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdoutText.split(separator: "\n").contains("\(service)\ta"), "\(listed.stdoutText)")
        case .delete:
            #expect(try cli.credvault(["store", service, "a"], stdin: value).status == 0)
            let deleted = try cli.credvault(["delete", service, "a"])
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(try cli.credvault(["lookup", service, "a"]).status == 1)
            #expect(try cli.store.load(CredentialKey(service: service, account: "a")) == nil)
        case .ephemeral:
            let stored = try cli.credvault(["store", service, "nonce", "--ttl", "600"], stdin: value)
            if provider.hasSessionCollection {
                #expect(stored.status == 0, "\(stored.stderr)")
                #expect(try cli.credvault(["lookup", service, "nonce"]).stdout == value)
            } else {
                // No session collection: refused, naming the provider, and nothing stored.
                #expect(stored.status == ExitCodes.failure, "\(stored.stderr)")
                #expect(stored.stderr.contains("\(provider.identified) has no session collection"), "\(stored.stderr)")
                #expect(try cli.credvault(["lookup", service, "nonce"]).status == 1)
            }
        case .info:
            let info = try cli.credvault(["info", "--backend", "secret-service"])
            #expect(info.status == 0, "\(info.stderr)")
            #expect(info.stdoutText.contains("provider: \(provider.identified)\nstate: unlocked\n"), "\(info.stdoutText)")
            let capabilities = info.stdoutText.split(separator: "\n").first { $0.hasPrefix("capabilities: ") } ?? ""
            #expect(capabilities.contains("ephemeral") == provider.hasSessionCollection, "\(info.stdoutText)")
        case .automaticChoice:
            let info = try cli.credvault(["info", "--backend", "auto"])
            #expect(info.status == 0, "\(info.stderr)")
            #expect(info.stdoutText.hasPrefix("backend: secret-service\nchosen because: the Secret Service is reachable"), "\(info.stdoutText)")
        case .secretToolWritesCredvaultReads:
            let stored = try CLIChild.run(
                try SecretTool.path(), ["store", "--label=by secret-tool", "service", service, "username", "erin"], stdin: value,
                inheriting: cli.environment)
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(try cli.credvault(["lookup", service, "erin"]).stdout == value)
        case .credvaultWritesSecretToolReads:
            #expect(try cli.credvault(["store", service, "frank"], stdin: value).status == 0)
            let looked = try CLIChild.run(try SecretTool.path(), ["lookup", "service", service, "username", "frank"], inheriting: cli.environment)
            #expect(looked.status == 0 && looked.stdout == value, "\(looked.stderr)")
        case .lockedCollection:
            let own = try cli.ownInstance()
            #expect(try cli.credvault(["store", service, "a"], stdin: value).status == 0)
            try own.lock()
            // Locked is never "not found" (1), and the automatic choice never takes the file.
            for arguments in [["lookup", service, "a"], ["store", service, "b"], ["list"], ["delete", service, "a"]] {
                let result = try cli.credvault(arguments, stdin: value)
                #expect(result.status == ExitCodes.locked, "\(arguments): \(result.stderr)")
            }
            let automatic = try cli.credvault(["info", "--backend", "auto"])
            #expect(automatic.status == ExitCodes.locked, "\(automatic.stdoutText)")
            #expect(automatic.stdoutText.contains("state: locked"), "\(automatic.stdoutText)")
            try own.unlock()
            #expect(try cli.credvault(["lookup", service, "a"]).stdout == value)
        case .stoppedProvider:
            let own = try cli.ownInstance()
            #expect(try cli.credvault(["store", service, "a"], stdin: value).status == 0)
            own.send(SIGSTOP)
            let stopped = try cli.credvault(["lookup", service, "a"], timeout: 2)
            own.send(SIGCONT)
            #expect(stopped.status == ExitCodes.busy, "timed out at its deadline: \(stopped.stderr)")
            #expect(try cli.credvault(["lookup", service, "a"]).stdout == value, "answers again once resumed")
        case .killedProvider:
            let own = try cli.ownInstance()
            #expect(try cli.credvault(["store", service, "a"], stdin: value).status == 0)
            // A process that talked to the provider before it died names it.
            let connected = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: TestEnvironment.timeout, busAddress: own.bus))
            #expect(try connected.load(CredentialKey(service: service, account: "a")) == value)
            own.send(SIGKILL)
            let killed = try cli.credvault(["lookup", service, "a"])
            #expect(killed.status == ExitCodes.notAvailable, "\(killed.stderr)")
            #expect(killed.stderr.contains("no Secret Service provider on the D-Bus session bus"), "\(killed.stderr)")
            #expect(!killed.stderr.contains("install and start gnome-keyring"), "\(killed.stderr)")
            let gone = thrown { () throws(CredentialVaultError) in try connected.load(CredentialKey(service: service, account: "a")) }
            guard case .notAvailable(let why)? = gone else {
                Issue.record("a load from a dead provider gave \(String(describing: gone))")
                return
            }
            #expect(why.contains("\(provider.identified)"), "\(why)")
        }
    }
}

/// `credvault` exit codes the checks expect (`credvault --help`).
enum ExitCodes {
    static let failure: Int32 = 3
    static let busy: Int32 = 7
    static let notAvailable: Int32 = 8
    static let locked: Int32 = 10
    static let interactionRequired: Int32 = 14
}

/// `credvault --backend secret-service` on one provider's shared instance, or on an instance of
/// the check's own (`ownInstance()`), with a HOME of its own and a service name of its own.
final class ProviderCLI {
    let provider: Provider
    let service = "cvtest-\(UUID().uuidString.prefix(8))"
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("cv-provider-\(UUID().uuidString)")
    private(set) var environment: [String: String?]
    /// A store on the same bus, for looking behind the CLI.
    private(set) var store: SecretServiceStore
    private var own: ProviderInstance?

    init(_ provider: Provider) throws {
        self.provider = provider
        environment = provider.childEnvironment
        store = SecretServiceStore(configuration: provider.configuration())
        // credvault makes its lock directory ($HOME/.cache/...) but not HOME itself, as a
        // user's home is there.
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    /// Moves this CLI to a provider instance of its own (for the checks that lock, stop or kill it).
    func ownInstance(options: [String: String] = [:]) throws -> ProviderInstance {
        let instance = try ProviderInstance(provider, options: options)
        own = instance
        environment = instance.childEnvironment
        store = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: TestEnvironment.timeout, busAddress: instance.bus))
        return instance
    }

    /// Runs `credvault ARGUMENTS --backend secret-service` (unless a backend is given).
    /// Runs credvault against this provider. `timeout` is its wait per Secret Service call: a
    /// generous one by default (a provider just started or resumed on a loaded machine answers
    /// slowly), a short one where the deadline itself is what is tested.
    func credvault(_ arguments: [String], stdin: Data = Data(), timeout seconds: Int = 120) throws -> CLIChild.Outcome {
        var environment = self.environment
        environment["CREDVAULT_SECRET_SERVICE_TIMEOUT"] = String(seconds)
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = home.appendingPathComponent("data").path
        environment["XDG_STATE_HOME"] = home.appendingPathComponent("state").path
        environment["CREDVAULT_BACKEND"] = nil
        environment["CREDVAULT_INTERACTIVE"] = nil
        let backend = arguments.contains("--backend") ? [] : ["--backend", "secret-service"]
        return try CLIChild.run(SecretServiceCLITests.credvaultPath, arguments + backend, stdin: stdin, inheriting: environment)
    }

    func cleanUp() {
        if own == nil { _ = try? store.deleteAll(service: service) }
        own?.stop()
        try? FileManager.default.removeItem(at: home)
    }
}
