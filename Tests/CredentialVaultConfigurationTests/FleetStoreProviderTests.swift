#if Configuration
import Configuration
import CredentialVault
import CredentialVaultConfiguration
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Testing

/// The provider over the fleet store on a real PostgreSQL (scripts/services/postgres.sh): what
/// another host writes reaches a server's configuration at its next reload.
@Suite(.ownThread, .enabled(if: ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"] != nil, "needs scripts/services/postgres.sh"))
final class FleetStoreProviderTests {
    let dir = TempDirectory()
    let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")

    /// This test's fleet store (a schema of its own), as host `name`; the first call initializes it.
    /// A freshness interval of zero: every read asks the server (by default a host may answer
    /// from its cache for up to a second after another host's write, and a reload then too).
    func host(_ name: String, initialize: Bool = false) async throws -> PostgresStore {
        var configuration = PostgresConfiguration(
            connectionString: ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"]! + " application_name=\(schema)", schema: schema,
            freshnessInterval: .zero)
        configuration.stateDirectory = dir.path("state-\(name)")
        let keyFile = dir.path("\(name).key")
        if !FileManager.default.fileExists(atPath: keyFile.path) {
            _ = FileManager.default.createFile(
                atPath: keyFile.path, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }), attributes: [.posixPermissions: 0o600])
        }
        if initialize { return try await PostgresStore.initialize(configuration, host: name, secret: .keyFile(keyFile)) }
        return try await PostgresStore.open(configuration, host: name, secret: .keyFile(keyFile))
    }

    deinit {
        _ = try? CLIChild.run("/usr/bin/psql", [ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"]!, "-X", "-q", "-c", "DROP SCHEMA IF EXISTS \(schema) CASCADE"])
    }

    @Test func aServerReadsTheFleetAfterItsEnvironmentAndSeesAnotherProcessesChangesAtTheNextReload() async throws {
        let writer = try await host("web-1", initialize: true)
        try await writer.put("db.password", "fleet-v1")
        try await writer.put("db.user", "fleet-user")
        try await writer.put("smtp.password", "mail-secret")
        let vault = try await VaultConfigProvider(store: try await host("web-1"), mapping: try ConfigTestVault.mapping(), name: "fleet")
        let config = ConfigReader(providers: [EnvironmentVariablesProvider(environmentVariables: ["DB_USER": "env-user"]), vault])
        #expect(config.string(forKey: "db.password", isSecret: true) == "fleet-v1")
        #expect(config.string(forKey: "db.user", isSecret: true) == "env-user")
        let (watched, watchTask) = watch(vault, "db.password")
        defer { watchTask.cancel() }
        #expect(await watched.first(1) == ["fleet-v1"])

        // Another process (the writer's own connection) rotates one value and removes another.
        try await writer.put("db.password", "fleet-v2")
        _ = try await writer.delete(ConfigTestVault.key("smtp.password"))
        try await vault.reload()
        #expect(await watched.first(2) == ["fleet-v1", "fleet-v2"])
        #expect(config.string(forKey: "db.password", isSecret: true) == "fleet-v2")
        #expect(config.string(forKey: "smtp.password", isSecret: true) == nil)
        #expect(vault.count == 2)
    }

    @Test func aFleetStoreThatCannotBeReachedKeepsTheLastSnapshot() async throws {
        let writer = try await host("web-1", initialize: true)
        try await writer.put("api.token", "before-the-outage")
        let vault = try await VaultConfigProvider(store: try await host("web-1"), mapping: try ConfigTestVault.mapping())
        // The schema goes away under the store (as a dropped or restored database would).
        try await writer.put("api.token", "never-read")
        _ = try CLIChild.run("/usr/bin/psql", [ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"]!, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "DROP SCHEMA \(schema) CASCADE"])
        await expectThrows(\CredentialVaultError.isNotAvailable) { try await vault.reload() }
        #expect(ConfigReader(provider: vault).string(forKey: "api.token", isSecret: true) == "before-the-outage")
    }
}
#endif
