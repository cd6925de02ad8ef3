import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Backend choice in this process (the keyring's states are tested on throw-away buses in
/// ResolverKeyringStateTests, the CLI's `auto` in SecretServiceCLITests).
@Suite(.ownThread) struct BackendResolverTests {
    static let application = try! ApplicationIdentifier("org.cvtest.Resolver")

    @Test func explicitChoicesAreTakenAsTheyAre() throws {
        let resolver = BackendResolver(application: Self.application, environment: ["CREDVAULT_BACKEND": "memory"])
        #expect(try resolver.decide(.file).kind == .file)
        #expect(try resolver.decide(.secretService).kind == .secretService)
        #expect(try resolver.decide(.memory).kind == .memory)
    }

    @Test func environmentOverridesTheAutomaticChoice() throws {
        for (name, kind) in [("file", BackendKind.file), ("memory", .memory), ("secret-service", .secretService)] {
            let decision = try BackendResolver(application: Self.application, environment: ["CREDVAULT_BACKEND": name]).decide()
            #expect(decision.kind == kind)
            #expect(decision.reason == "CREDVAULT_BACKEND=\(name)")
            #expect(!decision.isKeyringLocked)
        }
        #expect {
            try BackendResolver(application: Self.application, environment: ["CREDVAULT_BACKEND": "plaintext"]).decide()
        } throws: { error in
            guard case .invalidArgument = error as? CredentialVaultError else { return false }
            return true
        }
    }

    @Test func namesParse() {
        #expect(BackendChoice(name: "auto") == .automatic)
        #expect(BackendChoice(name: "automatic") == .automatic)
        #expect(BackendChoice(name: "secret-service") == .secretService)
        #expect(BackendChoice(name: "plain") == nil)
    }

    /// The bug this fixes: a Secret Service configuration's default service was ignored by the
    /// sealed-file fallback. Now one identifier derives every backend's settings, and a
    /// configuration given for its other settings cannot take another namespace.
    @Test func oneIdentifierScopesEveryConfiguration() throws {
        let resolver = BackendResolver(
            application: Self.application, secretService: SecretServiceConfiguration(timeout: .seconds(1)),
            sealedFile: SealedFileConfiguration(lockTimeout: .seconds(2)))
        #expect(resolver.secretService.application == Self.application)
        #expect(resolver.secretService.defaultService == "org.cvtest.Resolver")
        #expect(resolver.secretService.timeout == .seconds(1))
        #expect(resolver.sealedFile.application == Self.application)
        #expect(resolver.sealedFile.defaultService == "org.cvtest.Resolver")
        #expect(resolver.sealedFile.lockTimeout == .seconds(2))
        #expect(resolver.sealedFileURL == Self.application.defaultVaultURL)
        #expect(resolver.sealedFileURL.path.hasSuffix("/org.cvtest.Resolver/credentials.cvault"))

        // Explicit overrides stay: another default service, another vault.
        var other = BackendResolver(
            application: Self.application, secretService: SecretServiceConfiguration(defaultService: "svc"),
            sealedFileURL: URL(fileURLWithPath: "/tmp/x.cvault"))
        #expect(other.secretService.defaultService == "svc")
        #expect(other.sealedFileURL.path == "/tmp/x.cvault")
        other.secretService = SecretServiceConfiguration(application: .credvault)
        #expect(other.secretService.application == Self.application, "assigned later: still the resolver's")
    }

    /// A resolver given a Secret Service configuration with its own default service gives the
    /// sealed file (and every other backend) that service too: the same `save(key:)` never
    /// lands under two service names depending on the backend.
    @Test func anExplicitDefaultServiceReachesEveryBackend() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cv-resolver-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let resolver = BackendResolver(
            application: try ApplicationIdentifier("org.example.App"), environment: [:],
            secretService: SecretServiceConfiguration(defaultService: "org.example.Desktop"),
            sealedFileURL: dir.appendingPathComponent("v/credentials.cvault"),
            sealedFile: SealedFileConfiguration(device: DeviceIdentity(hostSecretURL: dir.appendingPathComponent("host/secret"), machineID: "m")))
        #expect(resolver.defaultService == "org.example.Desktop")
        #expect(try resolver.open(.file).store.defaultService == "org.example.Desktop", "the sealed file too")
        #expect(try resolver.open(.memory).store.defaultService == "org.example.Desktop")
        #expect(try resolver.open(.secretService).store.defaultService == "org.example.Desktop")
    }

    @Test func theCLINamespaceKeepsItsDocumentedDefaults() {
        let resolver = BackendResolver(application: .credvault)
        #expect(resolver.sealedFileURL == SealedFileStore.defaultURL)
        #expect(SealedFileStore.defaultURL.path.hasSuffix("/credential-vault/default.cvault"))
        #expect(resolver.secretService.defaultService == "credential-vault")
        #expect(resolver.secretService.application.secretServiceScope == nil)
        #expect(SecretServiceConfiguration().application == .credvault)
        #expect(InMemoryStore().defaultService == "credential-vault")
    }

    @Test(.privateKeyring) func automaticPicksTheUnlockedSecretService() throws {
        let resolver = Self.sharedKeyringResolver()
        Self.expectSecretService(try resolver.open())
        #expect(try resolver.waitForUnlock(timeout: TestEnvironment.timeout).isLocked == false)
    }

    @Test(.privateKeyring) func automaticPicksTheUnlockedSecretServiceAsync() async throws {
        let resolver = Self.sharedKeyringResolver()
        Self.expectSecretService(try await resolver.open())
        #expect(try await resolver.waitForUnlock(timeout: TestEnvironment.timeout).isLocked == false)
    }

    /// A resolver that probes the shared test keyring with the tests' generous per-call
    /// timeout: the keyring answers slowly while a parallel run talks to it on a loaded
    /// machine, and these tests are about the choice, not a deadline. The unlock wait is as
    /// long, as the keyring is unlocked at the first probe: it states only that it is unlocked.
    static func sharedKeyringResolver() -> BackendResolver {
        BackendResolver(application: application, environment: [:], secretService: SecretServiceConfiguration(timeout: TestEnvironment.timeout))
    }

    static func expectSecretService(_ selection: BackendSelection) {
        #expect(selection.decision.kind == .secretService, "\(selection.decision)")
        #expect(selection.decision.secretServiceStatus?.isLocked == false)
        #expect(!selection.decision.isKeyringLocked)
        #expect(selection.store is SecretServiceStore)
    }

    @Test func fileChoiceOpensTheSealedFileWithTheDeviceKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-resolver-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = DeviceIdentity(hostSecretURL: directory.appendingPathComponent("state/host-secret"), machineID: "test-machine")
        let resolver = BackendResolver(
            application: Self.application, environment: ["CREDVAULT_BACKEND": "file"],
            sealedFileURL: directory.appendingPathComponent("data/v.cvault"), sealedFile: SealedFileConfiguration(device: device))
        let selection = try resolver.open()
        let store = try #require(selection.store as? SealedFileStore)
        #expect(store.keySource == .device)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"))
        #expect(try resolver.open().store.load(CredentialKey(service: "s", account: "a")) == Data("v".utf8))
    }
}
