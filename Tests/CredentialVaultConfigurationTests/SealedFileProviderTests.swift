#if Configuration
import Configuration
import CredentialVault
import CredentialVaultConfiguration
import CredentialVaultTestSupport
import CredentialVaultTesting
import Foundation
import Logging
import Testing

/// The provider over a real sealed-file vault: what a `ConfigReader` reads, what reports and
/// logs show, how values are converted, and what reloads change.
@Suite(.ownThread) final class SealedFileProviderTests {
    let dir = TempDirectory()

    func provider(_ store: any AsyncTokenStorageAdapter, logger: Logger? = nil) async throws -> VaultConfigProvider {
        try await VaultConfigProvider(store: store, mapping: try ConfigTestVault.mapping(), logger: logger)
    }

    @Test func environmentVariablesComeFirstAndTheVaultAnswersTheRest() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("db.password", "from-the-vault")
        try await store.put("db.user", "vault-user")
        let vault = try await provider(store)
        let environment = EnvironmentVariablesProvider(environmentVariables: ["DB_PASSWORD": "from-the-environment"])
        let config = ConfigReader(providers: [environment, vault])
        #expect(config.string(forKey: "db.password", isSecret: true) == "from-the-environment")
        #expect(config.string(forKey: "db.user", isSecret: true) == "vault-user")
        #expect(config.string(forKey: "db.missing", isSecret: true) == nil)
        #expect(ConfigReader(provider: vault).string(forKey: "db.password", isSecret: true) == "from-the-vault")
        #expect(ConfigReader(provider: vault).scoped(to: "db").string(forKey: "user") == "vault-user", "a scoped reader's key is absolute")
    }

    @Test func everyValueIsSecretSoAccessReportsRedactItEvenWhenTheReaderDidNotSaySo() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("api.token", "tok-7f3a9c-never-shown")
        let capture = RenderingAccessReporter()
        let config = ConfigReader(
            providers: [EnvironmentVariablesProvider(environmentVariables: ["PLAIN_SETTING": "visible-setting"]), try await provider(store)],
            accessReporter: capture)
        #expect(config.string(forKey: "api.token") == "tok-7f3a9c-never-shown")
        #expect(config.string(forKey: "plain.setting") == "visible-setting")
        let lookup = try #require(try await provider(store).value(forKey: AbsoluteConfigKey(["api", "token"]), type: .string).value)
        #expect(lookup.isSecret)
        #expect(capture.text.contains("visible-setting"), "the reporter shows values that are not secret: \(capture.text)")
        #expect(capture.text.contains("<REDACTED>"), "\(capture.text)")
        #expect(!capture.text.contains("tok-7f3a9c"), "\(capture.text)")
        #expect(!"\(lookup)".contains("tok-7f3a9c"))
    }

    @Test func valuesConvertToTheTypeAskedAndNonUTF8IsNeverText() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("pool.size", "42")
        try await store.put("pool.ratio", "0.75")
        try await store.put("tls.verify", "true")
        try await store.put("hosts", "a.example, b.example")
        try await store.put("password", "ends with a space ")
        let binary: [UInt8] = [0xFF, 0xFE, 0x00, 0x41, 0xC3]
        try await store.save(Data(binary), for: ConfigTestVault.key("signing.key"), options: .portable)
        let vault = try await provider(store)
        let config = ConfigReader(provider: vault)
        #expect(config.int(forKey: "pool.size") == 42)
        #expect(config.double(forKey: "pool.ratio") == 0.75)
        #expect(config.bool(forKey: "tls.verify") == true)
        #expect(config.stringArray(forKey: "hosts") == ["a.example", "b.example"])
        #expect(config.string(forKey: "password") == "ends with a space ", "exact: nothing trimmed")
        #expect(config.bytes(forKey: "signing.key") == binary)
        let error = expectThrows(\CredentialVaultError.isInvalidArgument) {
            try vault.value(forKey: AbsoluteConfigKey(["signing", "key"]), type: .string)
        }
        #expect(!"\(String(describing: error))".contains("signing"), "the error names no credential")
        expectThrows(\CredentialVaultError.isInvalidArgument) { try vault.value(forKey: AbsoluteConfigKey(["tls", "verify"]), type: .int) }
        #expect(config.string(forKey: "signing.key") == nil, "the reader gets no garbage text")
    }

    @Test func keysTheMappingCannotRepresentAndOtherCredentialsAreAbsent() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("db.password", "right")
        // Credentials that are not configuration under this mapping.
        try await store.save(Data("wrong-1".utf8), for: CredentialKey(service: "other.example.com", account: "config/db.password"), options: .portable)
        try await store.save(Data("wrong-2".utf8), for: CredentialKey(service: ConfigTestVault.service, account: "db.password"), options: .portable)
        try await store.save(Data("wrong-3".utf8), for: CredentialKey(service: ConfigTestVault.service, account: "config/db..password"), options: .portable)
        try await store.save(Data("ephemeral".utf8), for: ConfigTestVault.key("session"), options: StorageOptions(lifetime: .ephemeral(ttl: .seconds(600))))
        let vault = try await provider(store)
        #expect(vault.count == 1)
        #expect(try vault.value(forKey: AbsoluteConfigKey(["db", "password"]), type: .string).value?.content == .string("right"))
        #expect(try vault.value(forKey: AbsoluteConfigKey(["db.password"]), type: .string).value == nil, "one component with a dot")
        #expect(try vault.value(forKey: AbsoluteConfigKey(["db", "", "password"]), type: .string).value == nil)
        #expect(try vault.value(forKey: AbsoluteConfigKey(["session"]), type: .string).value == nil, "ephemeral credentials are never read")
    }

    @Test func aReloadPicksUpChangesAndDeletionsAndWatchersHearOnlyOfTheirKeys() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("db.password", "v1")
        try await store.put("db.user", "alice")
        let capture = LogCapture()
        let vault = try await provider(store, logger: capture.logger(level: .debug))
        let (password, passwordWatch) = watch(vault, "db.password")
        let (user, userWatch) = watch(vault, "db.user")
        defer { passwordWatch.cancel(); userWatch.cancel() }
        #expect(await password.first(1) == ["v1"])
        #expect(await user.first(1) == ["alice"])
        let held = ConfigReader(provider: vault).snapshot()

        try await store.put("db.password", "v2")
        #expect(try vault.value(forKey: AbsoluteConfigKey(["db", "password"]), type: .string).value?.content == .string("v1"), "until a reload")
        try await vault.reload()
        #expect(await password.first(2) == ["v1", "v2"])
        let notified = capture.entries.filter { $0.message.contains("reloaded") }.map { $0.metadata["valueWatchersNotified"] }
        #expect(notified == ["1"], "the watcher of the unchanged key was not told: \(capture.text)")

        _ = try await store.delete(ConfigTestVault.key("db.password"))
        try await vault.reload()
        #expect(await password.first(3) == ["v1", "v2", nil])
        #expect(ConfigReader(provider: vault).string(forKey: "db.password") == nil)
        #expect(held.string(forKey: "db.password") == "v1", "a snapshot taken before keeps its values")
        #expect(user.all == ["alice"])
        #expect(!capture.text.contains("v1") && !capture.text.contains("v2") && !capture.text.contains("config/"), "\(capture.text)")
    }

    @Test func aFailedReloadKeepsTheLastSnapshotAndIsLoggedWithoutNamesOrValues() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("db.password", "last-good-value")
        let faulty = FaultInjectingStore(wrapping: store)
        let capture = LogCapture()
        let vault = try await provider(faulty, logger: capture.logger())
        let (watched, watchTask) = watch(vault, "db.password")
        defer { watchTask.cancel() }
        #expect(await watched.first(1) == ["last-good-value"])

        try await store.put("db.password", "newer-value")
        faulty.inject(.fail(.locked), into: .listKeys)
        await #expect(throws: CredentialVaultError.locked) { try await vault.reload() }
        faulty.inject(.fail(.notAvailable("no store")), into: .load)
        faulty.clear(.listKeys)
        await #expect(throws: CredentialVaultError.notAvailable("no store")) { try await vault.reload() }
        let config = ConfigReader(provider: vault)
        #expect(config.string(forKey: "db.password", isSecret: true) == "last-good-value")
        await #expect(throws: CredentialVaultError.notAvailable("no store")) {
            try await config.fetchString(forKey: "db.password", isSecret: true)
        }
        let warnings = capture.entries.filter { $0.level == .warning }
        #expect(warnings.count == 3, "\(capture.text)")
        #expect(!capture.text.contains("last-good") && !capture.text.contains("newer-value"), "\(capture.text)")
        #expect(!capture.text.contains("db.password") && !capture.text.contains(ConfigTestVault.service), "\(capture.text)")

        faulty.clear()
        try await vault.reload()
        #expect(config.string(forKey: "db.password", isSecret: true) == "newer-value")
        #expect(await watched.first(2) == ["last-good-value", "newer-value"])
    }

    @Test func aVaultFileDamagedUnderTheProviderKeepsTheLastSnapshot() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("db.password", "before-the-damage")
        let vault = try await provider(store)
        var bytes = try Data(contentsOf: store.url)
        for i in stride(from: bytes.count / 2, to: bytes.count, by: 7) { bytes[i] ^= 0x5A }
        try bytes.write(to: store.url)
        await expectThrows(\CredentialVaultError.isCorrupted) { try await vault.reload() }
        #expect(ConfigReader(provider: vault).string(forKey: "db.password", isSecret: true) == "before-the-damage")
    }

    @Test func thePollLoopReloadsAtEachTickAndEndsWhenCancelled() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("feature.key", "first")
        let vault = try await provider(store)
        let (watched, watchTask) = watch(vault, "feature.key")
        defer { watchTask.cancel() }
        #expect(await watched.first(1) == ["first"])
        let ticks = Ticks()
        let loop = Task { try await vault.run(pollInterval: .seconds(30), sleep: ticks.sleep) }
        #expect(await ticks.waiting(1))
        try await store.put("feature.key", "second")
        ticks.tick()
        #expect(await watched.first(2) == ["first", "second"])
        #expect(await ticks.waiting(2), "the loop waits again after a reload")
        loop.cancel()
        ticks.end()
        try await withCeiling(.seconds(60), "the loop to end once cancelled") { try await loop.value }
        await #expect(throws: CredentialVaultError.invalidArgument("the poll interval must be positive")) {
            try await vault.run(pollInterval: .zero)
        }
    }

    @Test func theProviderDescribesItselfWithoutNamesOrValues() async throws {
        let store = try await ConfigTestVault.create(dir)
        try await store.put("db.password", "hunter2-value")
        let vault = try await VaultConfigProvider(store: store, mapping: try ConfigTestVault.mapping(), name: "primary")
        #expect(vault.providerName == "VaultConfigProvider[primary]")
        for text in ["\(vault)", String(reflecting: vault), "\(vault.snapshot())"] {
            #expect(!text.contains("hunter2") && !text.contains("db.password") && !text.contains(ConfigTestVault.service), "\(text)")
        }
    }
}
#endif
