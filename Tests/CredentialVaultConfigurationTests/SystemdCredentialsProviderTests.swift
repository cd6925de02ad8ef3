#if Configuration
import Configuration
import CredentialVault
import CredentialVaultConfiguration
import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The provider over systemd credentials (`$CREDENTIALS_DIRECTORY`, laid out as systemd lays it
/// out: a 0700 directory of 0400 files named by the unit's `LoadCredential=` IDs).
@Suite(.ownThread) final class SystemdCredentialsProviderTests {
    let dir = TempDirectory()
    var credentials: String { dir.url.appendingPathComponent("credentials").path }
    /// systemd credentials are the keys `<default service>/<name>`: the mapping reads that service.
    let mapping = try! VaultConfigKeyMapping(service: SystemdCredentialNaming().service)

    init() throws {
        #expect(mkdir(credentials, 0o700) == 0)
    }

    func put(_ name: String, _ value: Data) throws {
        let path = credentials + "/" + name
        try value.write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o400) == 0)
    }

    @Test func aUnitsCredentialsAreItsConfigurationByTheirNames() async throws {
        try put("db.password", Data("from-systemd".utf8))
        try put("tls.key", Data([0x30, 0x82, 0xFF, 0x00]))
        try put("workers", Data("8".utf8))
        try put("not..configuration", Data("x".utf8))
        let store = try SystemdCredentialStore(directory: credentials)
        let vault = try await VaultConfigProvider(store: store, mapping: mapping)
        let config = ConfigReader(providers: [EnvironmentVariablesProvider(environmentVariables: ["WORKERS": "2"]), vault])
        #expect(config.string(forKey: "db.password", isSecret: true) == "from-systemd")
        #expect(config.int(forKey: "workers") == 2, "the environment comes first")
        #expect(ConfigReader(provider: vault).int(forKey: "workers") == 8)
        #expect(config.bytes(forKey: "tls.key", isSecret: true) == [0x30, 0x82, 0xFF, 0x00])
        expectThrows(\CredentialVaultError.isInvalidArgument) { try vault.value(forKey: AbsoluteConfigKey(["tls", "key"]), type: .string) }
        #expect(vault.count == 3, "a name the mapping cannot invert is not configuration")
    }

    @Test func aReloadSeesCredentialsAddedAndRemovedAndAFailingDirectoryKeepsTheLastValues() async throws {
        try put("api.token", Data("first-token".utf8))
        let store = try SystemdCredentialStore(directory: credentials)
        let capture = LogCapture()
        let vault = try await VaultConfigProvider(store: store, mapping: mapping, logger: capture.logger())
        let (watched, watchTask) = watch(vault, "api.token")
        defer { watchTask.cancel() }
        #expect(await watched.first(1) == ["first-token"])

        try put("db.password", Data("added".utf8))
        #expect(unlink(credentials + "/api.token") == 0)
        try await vault.reload()
        #expect(await watched.first(2) == ["first-token", nil])
        #expect(ConfigReader(provider: vault).string(forKey: "db.password", isSecret: true) == "added")

        // A credential file others could read is refused by the store: the whole reload fails
        // (a partial snapshot would drop values that exist) and the last values stay.
        try put("leaky", Data("x".utf8))
        #expect(chmod(credentials + "/leaky", 0o444) == 0)
        #expect(chmod(credentials + "/db.password", 0o600) == 0)
        try Data("changed-but-refused".utf8).write(to: URL(fileURLWithPath: credentials + "/db.password"))
        #expect(chmod(credentials + "/db.password", 0o400) == 0)
        await #expect(throws: CredentialVaultError.self) { try await vault.reload() }
        #expect(ConfigReader(provider: vault).string(forKey: "db.password", isSecret: true) == "added")
        let warning = try #require(capture.entries.first { $0.level == .warning }, "the failed reload is logged")
        #expect(warning.metadata["error"] == "permissionDenied")
        for name in ["leaky", "db.password", "api.token", "added", "changed-but-refused"] {
            #expect(!capture.text.contains(name), "\(capture.text)")
        }
    }
}
#endif
