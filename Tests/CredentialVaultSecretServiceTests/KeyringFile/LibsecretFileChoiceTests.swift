import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// `BackendChoice.libsecretFile`: which file and key the resolver picks, inside a sandbox and
/// outside, and that the store it opens shares its items with `secret-tool` (no portal needed:
/// outside a sandbox the key is a password, as libsecret's `SECRET_FILE_TEST_PASSWORD`).
@Suite(.ownThread)
struct LibsecretFileChoiceTests {
    static let app = try! ApplicationIdentifier("org.example.App")

    static func blockingDecision(_ resolver: BackendResolver, _ choice: BackendChoice = .automatic) throws -> BackendDecision {
        try resolver.decide(choice)
    }

    static func blockingOpen(_ resolver: BackendResolver, _ choice: BackendChoice) throws -> BackendSelection {
        try resolver.open(choice)
    }

    /// Whether these tests run outside a sandbox (as the project's do): the resolver finds none.
    static let outside = Sandbox.detect(environment: [:]) == nil

    @Test(.enabled(if: outside, "the tests run inside a Flatpak sandbox"))
    func outsideASandboxWithoutAPasswordTheChoiceIsRefusedTyped() {
        let resolver = BackendResolver(application: Self.app, environment: [:])
        #expect {
            try Self.blockingDecision(resolver, .libsecretFile)
        } throws: { error in
            guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
            return message.contains("password")
        }
        var overridden = resolver
        overridden.environment["CREDVAULT_BACKEND"] = "libsecret-file"
        #expect(throws: CredentialVaultError.self) { try Self.blockingDecision(overridden) }
    }

    @Test func insideASandboxTheKeyIsThePortalsAndThePathIsLibsecrets() throws {
        var resolver = BackendResolver(application: Self.app, environment: ["SECRET_FILE_TEST_PATH": "/tmp/x/default.keyring"])
        resolver.sandbox = Sandbox(kind: .snap, applicationID: "example")
        let decision = try Self.blockingDecision(resolver, .libsecretFile)
        #expect(decision.kind == .libsecretFile && decision.custody == nil)
        #expect(decision.libsecretFile == LibsecretFileTarget(path: "/tmp/x/default.keyring", key: .portal))
        // Without SECRET_FILE_TEST_PATH: $XDG_DATA_HOME/keyrings/default.keyring, as libsecret.
        resolver.environment["SECRET_FILE_TEST_PATH"] = ""
        #expect(try Self.blockingDecision(resolver, .libsecretFile).libsecretFile?.path == LibsecretFileConfiguration.defaultPath)
        // A password given wins over the portal, as SECRET_FILE_TEST_PASSWORD does in libsecret.
        resolver.libsecretFilePassword = SecureBytes(copying: Array("pw".utf8))
        #expect(try Self.blockingDecision(resolver, .libsecretFile).libsecretFile?.key == .password)
    }

    @Test func insideASandboxTheAutomaticChoiceIsLibsecretsFileOnlyWhenTheAppAsks() throws {
        var resolver = BackendResolver(application: Self.app, environment: [:])
        resolver.sandbox = Sandbox(kind: .snap, applicationID: "example")
        #expect(try Self.blockingDecision(resolver).kind == .file)
        #expect(try Self.blockingDecision(resolver).custody == .portal)
        resolver.prefersLibsecretFileInSandbox = true
        let asked = try Self.blockingDecision(resolver)
        #expect(asked.kind == .libsecretFile && asked.libsecretFile?.key == .portal)
        #expect(asked.reason == "inside a Snap sandbox (example), as the app asks: libsecret's keyring file")
        // CREDVAULT_BACKEND asks as well.
        resolver.prefersLibsecretFileInSandbox = false
        resolver.environment["CREDVAULT_BACKEND"] = "libsecret-file"
        let overridden = try Self.blockingDecision(resolver)
        #expect(overridden.kind == .libsecretFile && overridden.reason == "CREDVAULT_BACKEND=libsecret-file")
    }

    @Test(.enabled(if: outside, "the tests run inside a Flatpak sandbox"))
    func outsideASandboxThePreferenceChangesNothing() throws {
        var resolver = BackendResolver(application: Self.app, environment: [:])
        resolver.prefersLibsecretFileInSandbox = true
        resolver.secretService.timeout = .seconds(30)
        #expect(try Self.blockingDecision(resolver).kind != .libsecretFile)
    }

    @Test func aStoreOpenedWithAPasswordSharesItsItemsWithSecretTool() async throws {
        let file = SecretToolFile()
        var resolver = BackendResolver(application: .credvault, environment: ["SECRET_FILE_TEST_PATH": file.path])
        resolver.libsecretFilePassword = SecureBytes(copying: Array(file.password.utf8))
        let selection = try Self.blockingOpen(resolver, .libsecretFile)
        #expect(selection.decision.libsecretFile == LibsecretFileTarget(path: file.path, key: .password))
        let key = CredentialKey(service: "shared", account: "alice")
        try await selection.store.save(Data("from the resolver's store".utf8), for: key, options: StorageOptions())
        #expect(try await file.lookup(["service": "shared", "username": "alice"]) == "from the resolver's store")
        #expect(try await file.store("from secret-tool", attributes: ["service": "shared", "username": "bob"]))
        let opened = try await resolver.open(.libsecretFile)
        #expect(try await opened.store.load(CredentialKey(service: "shared", account: "bob")) == Data("from secret-tool".utf8))
    }
}
