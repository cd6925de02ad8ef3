import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The resolver picks systemd's credentials only when the app asks and `$CREDENTIALS_DIRECTORY`
/// is set; `CREDVAULT_BACKEND` still overrides; an explicit choice without the variable is
/// `notAvailable`, never another backend.
@Suite(.ownThread) final class SystemdCredentialsSelectionTests {
    static let application = try! ApplicationIdentifier("org.cvtest.SystemdCreds")
    let directory: String

    init() throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("cv-creds-XXXXXX").path
        var bytes = Array(template.utf8CString)
        directory = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let file = directory + "/api-token"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("from systemd".utf8)))
        #expect(chmod(file, 0o400) == 0)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func resolver(_ environment: [String: String], prefers: Bool) -> BackendResolver {
        var resolver = BackendResolver(application: Self.application, environment: environment)
        resolver.prefersSystemdCredentials = prefers
        return resolver
    }

    @Test func theAutomaticChoiceTakesThemWhenAskedAndSet() async throws {
        let resolver = resolver(["CREDENTIALS_DIRECTORY": directory], prefers: true)
        #expect(try Self.blockingDecision(resolver).kind == .systemdCredentials)
        #expect(try await resolver.decide().kind == .systemdCredentials)
        let selection = try Self.blockingOpen(resolver)
        #expect(selection.decision.reason.contains("CREDENTIALS_DIRECTORY"))
        // The application's default service: the string conveniences read by systemd name.
        #expect(try selection.store.synchronous.load(key: "api-token") == "from systemd")
        #expect(try await resolver.open().store.load(key: "api-token") == "from systemd")
        await #expect {
            try await selection.store.save(key: "x", value: "y")
        } throws: { error in
            guard case .unsupported = error as? CredentialVaultError else { return false }
            return true
        }
    }

    /// The synchronous `decide` and `open` (async code picks the async ones).
    static func blockingDecision(_ resolver: BackendResolver) throws -> BackendDecision { try resolver.decide() }
    static func blockingOpen(_ resolver: BackendResolver) throws -> BackendSelection { try resolver.open() }

    @Test func notAskedOrNotSetOrOverriddenItIsNotTaken() throws {
        #expect(try resolver(["CREDENTIALS_DIRECTORY": directory, "CREDVAULT_BACKEND": "memory"], prefers: false).decide().kind == .memory)
        #expect(try resolver(["CREDENTIALS_DIRECTORY": directory, "CREDVAULT_BACKEND": "memory"], prefers: true).decide().kind == .memory)
        #expect(try resolver(["CREDVAULT_BACKEND": "systemd-credentials", "CREDENTIALS_DIRECTORY": directory], prefers: false).decide().kind == .systemdCredentials)
        #expect {
            try self.resolver([:], prefers: true).open(.systemdCredentials)
        } throws: { error in
            guard case .notAvailable = error as? CredentialVaultError else { return false }
            return true
        }
        var named = resolver(["CREDENTIALS_DIRECTORY": directory], prefers: true)
        named.systemdCredentialNames = ["api-token": CredentialKey(service: "api.example.com", account: "deploy")]
        #expect(try named.open().store.synchronous.load(CredentialKey(service: "api.example.com", account: "deploy")) == Data("from systemd".utf8))
    }
}
