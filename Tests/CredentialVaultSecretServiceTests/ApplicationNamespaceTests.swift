import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Each application has its own namespace: the same `save(key:value:)` lands under one service
/// on every backend the resolver can pick, and two applications using the same key never see,
/// overwrite or delete each other's credentials.
@Suite(.ownThread) struct ApplicationNamespaceTests {
    /// An identifier no other test (or earlier run) uses.
    static func uniqueApplication(_ name: String) throws -> ApplicationIdentifier {
        try ApplicationIdentifier("org.cvtest.\(name)-\(UUID().uuidString.prefix(8))")
    }

    @Test(.privateKeyring) func theSameSaveLandsUnderTheSameServiceOnEveryBackend() throws {
        let application = try Self.uniqueApplication("Every")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-namespace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = DeviceIdentity(hostSecretURL: directory.appendingPathComponent("state/host-secret"), machineID: "test-machine")
        let resolver = BackendResolver(
            application: application, environment: [:],
            sealedFileURL: directory.appendingPathComponent(application.name + "/credentials.cvault"),
            sealedFile: SealedFileConfiguration(device: device))
        let expected = CredentialKey(service: application.name, account: "access_token")
        for choice in [BackendChoice.automatic, .secretService, .file, .memory] {
            let store = try resolver.open(choice).store
            defer { _ = try? store.deleteAll(service: application.name) }
            #expect(store.defaultService == application.name, "\(choice)")
            try store.save(key: "access_token", value: "token-\(choice)")
            #expect(try store.listKeys().map(\.service) == [application.name], "\(choice)")
            #expect(try store.load(expected) == Data("token-\(choice)".utf8), "\(choice)")
        }
    }

    @Test(.privateKeyring) func twoApplicationsWithTheSameKeyDoNotCollideInTheSecretService() throws {
        let desktop = SecretServiceStore(configuration: SecretServiceConfiguration(application: try Self.uniqueApplication("Desktop"), timeout: TestEnvironment.timeout))
        let other = SecretServiceStore(configuration: SecretServiceConfiguration(application: try Self.uniqueApplication("Other"), timeout: TestEnvironment.timeout))
        let unscoped = TestEnvironment.unscopedStore()
        let service = "cvtest-shared-\(UUID().uuidString.prefix(8))"
        let key = CredentialKey(service: service, account: "access_token")
        defer {
            _ = try? desktop.deleteAll()
            _ = try? other.deleteAll()
            _ = try? unscoped.deleteAll(service: service)
        }
        // A credential stored before identifiers existed (or by secret-tool): no application sees it.
        try unscoped.save(Data("legacy".utf8), for: key)
        #expect(try desktop.load(key) == nil)

        try desktop.save(Data("desktop".utf8), for: key)
        try other.save(Data("other".utf8), for: key)
        try other.save(Data("other-2".utf8), for: key, options: StorageOptions(accessibility: .portable))
        #expect(try desktop.load(key) == Data("desktop".utf8))
        #expect(try other.load(key) == Data("other-2".utf8))
        #expect(try desktop.metadata(for: key)?.accessibility == .deviceOnly)
        #expect(try desktop.listKeys() == [key])
        #expect(try other.listKeys() == [key])

        // Deleting in one namespace leaves the others.
        #expect(try other.deleteAll() == 1)
        #expect(try desktop.load(key) == Data("desktop".utf8))
        #expect(try desktop.delete(key))
        #expect(try desktop.listKeys().isEmpty)
        #expect(try unscoped.load(key) == Data("legacy".utf8), "the unscoped item was never touched")
    }

    /// The unscoped namespace (the CLI's, `secret-tool`'s) and an application's are apart both
    /// ways: an unscoped save, take, delete or deleteAll of the same key never touches the
    /// application's item, and the unscoped store does not list or read it.
    @Test(.privateKeyring) func theUnscopedNamespaceNeverTouchesAnApplicationsItems() throws {
        let app = SecretServiceStore(configuration: SecretServiceConfiguration(application: try Self.uniqueApplication("Apart"), timeout: TestEnvironment.timeout))
        let unscoped = TestEnvironment.unscopedStore()
        let key = CredentialKey(service: "cvtest-apart-\(UUID().uuidString.prefix(8))", account: "a")
        defer {
            _ = try? app.deleteAll()
            _ = try? unscoped.deleteAll(service: key.service)
        }
        try app.save(Data("app".utf8), for: key)
        #expect(try unscoped.load(key) == nil)
        #expect(try unscoped.metadata(for: key) == nil)
        #expect(try unscoped.listKeys(service: key.service).isEmpty)
        try unscoped.save(Data("cli".utf8), for: key)
        try unscoped.save(Data("cli-2".utf8), for: key, options: StorageOptions(accessibility: .portable))
        #expect(try unscoped.load(key) == Data("cli-2".utf8))
        #expect(try unscoped.take(key) == Data("cli-2".utf8))
        try unscoped.save(Data("cli-3".utf8), for: key)
        #expect(try unscoped.delete(key))
        #expect(try unscoped.deleteAll(service: key.service) == 0)
        #expect(try app.load(key) == Data("app".utf8), "the application's item survived every unscoped change")
        #expect(try app.listKeys() == [key])
    }

    /// The documented upgrade: credentials stored unscoped (before identifiers) copied into the
    /// application's namespace with `CredentialMigrator`, the source's delete sparing the copy.
    @Test(.privateKeyring) func anUnscopedStoreMigratesIntoAnApplication() async throws {
        let app = SecretServiceStore(configuration: SecretServiceConfiguration(application: try Self.uniqueApplication("Upgrade"), timeout: TestEnvironment.timeout))
        let unscoped = TestEnvironment.unscopedStore()
        let service = "cvtest-upgrade-\(UUID().uuidString.prefix(8))"
        defer {
            _ = try? app.deleteAll()
            _ = try? unscoped.deleteAll(service: service)
        }
        for account in ["access_token", "refresh_token"] {
            try await unscoped.save(Data(account.utf8), for: CredentialKey(service: service, account: account))
        }
        let report = try await CredentialMigrator(from: unscoped, to: app).migrate(service: service)
        #expect(report.migrated.count == 2, "\(report)")
        #expect(try await unscoped.listKeys(service: service).isEmpty)
        for account in ["access_token", "refresh_token"] {
            #expect(try await app.load(CredentialKey(service: service, account: account)) == Data(account.utf8))
        }
    }

    @Test func twoApplicationsHaveTheirOwnDefaultVault() throws {
        let desktop = try ApplicationIdentifier("org.example.Desktop")
        let other = try ApplicationIdentifier("org.example.Other")
        #expect(desktop.defaultVaultURL != other.defaultVaultURL)
        #expect(desktop.defaultVaultURL != SealedFileStore.defaultURL)
        #expect(BackendResolver(application: desktop).sealedFileURL == desktop.defaultVaultURL)
        #expect(BackendResolver(application: other).sealedFileURL == other.defaultVaultURL)

        // Both default vaults, laid out as they would be under one $XDG_DATA_HOME.
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("cv-vaults-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let device = DeviceIdentity(hostSecretURL: data.appendingPathComponent("state/host-secret"), machineID: "test-machine")
        func store(_ application: ApplicationIdentifier) throws -> any TokenStorageAdapter {
            let relative = application.defaultVaultURL.pathComponents.suffix(2).joined(separator: "/")
            return try BackendResolver(
                application: application, environment: [:], sealedFileURL: data.appendingPathComponent(relative),
                sealedFile: SealedFileConfiguration(device: device)
            ).open(.file).store
        }
        try store(desktop).save(key: "access_token", value: "desktop")
        try store(other).save(key: "access_token", value: "other")
        #expect(try store(desktop).load(key: "access_token") == "desktop")
        #expect(try store(other).load(key: "access_token") == "other")
    }

    /// The expiry sweep deletes only the sweeping store's own expired items: application B (a
    /// clock an hour ahead) used to purge application A's still-valid ephemeral credential.
    @Test(.privateKeyring) func anotherApplicationsSweepLeavesMyEphemeralItem() throws {
        let prefix = "cvtest-\(UUID().uuidString.prefix(8))/"
        let a = SecretServiceStore(
            configuration: SecretServiceConfiguration(application: try Self.uniqueApplication("SweepA"), timeout: TestEnvironment.timeout, serviceNamePrefix: prefix))
        let clock = ManualClock(start: Date().addingTimeInterval(3600))
        let b = SecretServiceStore(
            configuration: SecretServiceConfiguration(application: try Self.uniqueApplication("SweepB"), timeout: TestEnvironment.timeout, serviceNamePrefix: prefix, clock: clock))
        defer { _ = try? a.deleteAll(); _ = try? b.deleteAll() }
        let key = CredentialKey(service: "svc", account: "acct")
        try a.save(Data("a-nonce".utf8), for: key, options: .ephemeral(ttl: .seconds(600)))
        try b.save(Data("b".utf8), for: CredentialKey(service: "other", account: "acct"), options: .ephemeral(ttl: .seconds(1)))
        clock.advance(by: .seconds(2))
        _ = try b.delete(CredentialKey(service: "unrelated", account: "acct"))  // b's own item expired: b sweeps
        #expect(try a.take(key).map { String(decoding: $0, as: UTF8.self) } == "a-nonce")
    }
}
