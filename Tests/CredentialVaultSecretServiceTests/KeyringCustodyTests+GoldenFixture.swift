import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// The golden fixture of keyring custody (`GoldenFixtures`: `keyring.cvault`, a device-key
/// vault with a rollback counter, and `keyring-device-secret`, the 32 bytes the keyring held).
/// Its secret and counter live in a keyring, not in the folder: the test puts them into the
/// private keyring where docs/FORMAT.md says a reader finds them, then opens the vault. In this
/// suite because the keyring holds one device secret for every vault, which the test replaces
/// for a while (the suite is serialized).
extension KeyringCustodyTests {
    /// The attributes FORMAT.md gives for the custody items (`secret-tool` searches by them).
    private static let custodyAttributes = ["service", "credential-vault custody", "credential-vault:application", "org.credential-vault.custody"]

    @Test(.secretTool) func theGoldenKeyringFixtureOpensWithTheDocumentedKeyringItems() async throws {
        try await offThePool {
            let dir = TempDirectory()
            let (folder, device) = try GoldenFixtures.privateCopy(in: dir)
            let url = folder.appendingPathComponent("keyring.cvault")
            let locked = try LockedVault(url: url)
            #expect(locked.custody == .keyring && locked.hasRollbackCounter && locked.keySource == .device)

            let custodian = KeyringCustodian(timeout: TestEnvironment.timeout)
            let saved = try custodian.store.load(KeyringCustodian.secretKey)
            defer {
                if let saved { try? custodian.store.save(saved, for: KeyringCustodian.secretKey, options: .portable) }
            }
            var configuration = SealedFileConfiguration(device: device)
            configuration.custody = .keyring
            configuration.custodians = [custodian]
            // Another keyring's secret: the device key is another one.
            try custodian.store.save(Data(repeating: 7, count: 32), for: KeyringCustodian.secretKey, options: .portable)
            #expect(throws: CredentialVaultError.deviceMismatch) { try SealedFileStore.open(at: url, secret: .device, configuration: configuration) }

            // The recorded secret, and the counter at the value the newest commit record carries,
            // as items with the documented attributes (the counter stored by secret-tool).
            let secret = try Data(contentsOf: folder.appendingPathComponent("keyring-device-secret"))
            try custodian.store.save(secret, for: KeyringCustodian.secretKey, options: .portable)
            let found = try CLIChild.run(try SecretTool.path(), ["lookup"] + Self.custodyAttributes + ["username", "device-secret"])
            #expect(found.status == 0 && found.stdout.prefix(32) == secret, "the device secret is found by its documented attributes")
            let bytes = Array(try Data(contentsOf: url))
            let vaultID = bytes[20..<36].map { String(format: "%02x", $0) }.joined()  // the header's vault id (FORMAT.md)
            let (reference, value) = GoldenFixtures.newestCounter(bytes)
            let counter = "rollback-counter:\(vaultID).\(String(format: "%08x", reference))"
            let stored = try CLIChild.run(
                try SecretTool.path(), ["store", "--label=golden fixture counter"] + Self.custodyAttributes + ["username", counter],
                stdin: Data(String(value).utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
            defer { _ = try? CLIChild.run(try SecretTool.path(), ["clear"] + Self.custodyAttributes + ["username", counter]) }

            let store = try SealedFileStore.open(at: url, secret: .device, configuration: configuration)
            try GoldenFixtures.expectExactContents(store)
            #expect(store.custody == .keyring && store.hasRollbackCounter)
            try store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "x"), options: .portable)
            let moved = try CLIChild.run(try SecretTool.path(), ["lookup"] + Self.custodyAttributes + ["username", counter])
            #expect(moved.stdoutText.hasPrefix(String(value + 1)), "a save moves the keyring's counter: \(moved.stdoutText)")
        }
    }

    @Test(.enabled(if: GoldenFixtures.writing)) func writeTheGoldenKeyringFixture() async throws {
        try await offThePool {
            let folder = try GoldenFixtures.folderForWriting()
            let clock = ManualClock(start: GoldenFixtures.writingStart)
            let custodian = KeyringCustodian(timeout: TestEnvironment.timeout)
            var configuration = GoldenFixtures.configuration(in: folder, clock: clock)
            configuration.custody = .keyring
            configuration.custodians = [custodian]
            guard try GoldenFixtures.write("keyring.cvault", configuration: configuration, clock: clock) != nil else { return }
            let secret = try #require(try custodian.store.load(KeyringCustodian.secretKey))
            _ = FileManager.default.createFile(
                atPath: folder.appendingPathComponent("keyring-device-secret").path, contents: secret, attributes: [.posixPermissions: 0o600])
            try GoldenFixtures.tidyAfterWriting()
        }
    }
}
