import Foundation
import Testing

@testable import CredentialVault

/// Vault files written by format 1.0, kept forever: every future version must still open them
/// and read exactly these values. Regenerate (only for a new format version, into a new folder)
/// with CREDVAULT_WRITE_FIXTURES=1 swift test --filter GoldenFixtureTests.
@Suite final class GoldenFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/v1")
    static let passphrase = "golden fixture passphrase v1"
    static let machineID = "golden-fixture-machine-id"
    let dir = TempDirectory()

    static let expected: [(CredentialKey, Data, StorageOptions)] = [
        (CredentialKey(service: "fixture.example", account: "alice"), Data("portable-secret-v1".utf8), .portable),
        (CredentialKey(service: "fixture.example", account: "bob", label: "Bob's token"), Data([0, 1, 2, 0xFF, 0]), .default),
        (CredentialKey(service: "ünïcødé.example", account: "日本"), Data(), .portable),
    ]

    /// Copies the fixtures into a private directory (git does not keep 0600 modes).
    private func privateCopy() throws -> (URL, DeviceIdentity) {
        let target = dir.path("v1")
        try FileManager.default.copyItem(at: Self.fixtures, to: target)
        chmod(target.path, 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: target.path) {
            chmod(target.appendingPathComponent(name).path, 0o600)
        }
        return (target, DeviceIdentity(hostSecretURL: target.appendingPathComponent("host-secret"), machineID: Self.machineID))
    }

    @Test(arguments: ["passphrase.cvault", "keyfile.cvault", "device.cvault"])
    func version1FixturesOpenAndReadExactly(name: String) throws {
        let (folder, device) = try privateCopy()
        let key: VaultKey =
            switch name {
            case "passphrase.cvault": .passphrase(Self.passphrase)
            case "keyfile.cvault": .keyFile(folder.appendingPathComponent("keyfile"))
            default: .device
            }
        let store = try SealedFileStore.open(
            at: folder.appendingPathComponent(name), key: key, configuration: SealedFileConfiguration(device: device))
        #expect(store.formatVersion == "1.0")
        #expect(try store.listKeys().count == Self.expected.count)
        for (credential, value, options) in Self.expected {
            #expect(try store.load(credential) == value)
            #expect(try store.metadata(for: credential)?.accessibility == options.accessibility)
            #expect(try store.metadata(for: credential)?.key.label == credential.label)
        }
        // On another machine the device-only record is refused, the portable ones open.
        if name != "device.cvault" {
            let elsewhere = try SealedFileStore.open(
                at: folder.appendingPathComponent(name), key: key,
                configuration: SealedFileConfiguration(device: DeviceIdentity(hostSecretURL: dir.path("other/host-secret"), machineID: "other")))
            #expect(try elsewhere.load(Self.expected[0].0) == Self.expected[0].1)
            #expect(throws: CredentialVaultError.deviceMismatch) { try elsewhere.load(Self.expected[1].0) }
        }
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CREDVAULT_WRITE_FIXTURES"] == "1"))
    func writeFixtures() throws {
        let folder = Self.fixtures
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(folder.path, 0o700)
        let secret = folder.appendingPathComponent("host-secret")
        let keyFile = folder.appendingPathComponent("keyfile")
        _ = FileManager.default.createFile(atPath: secret.path, contents: Data((0..<32).map { UInt8($0) }), attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(atPath: keyFile.path, contents: Data((0..<32).map { UInt8(255 - $0) }), attributes: [.posixPermissions: 0o600])
        let device = DeviceIdentity(hostSecretURL: secret, machineID: Self.machineID)
        for (name, key) in [("passphrase.cvault", VaultKey.passphrase(Self.passphrase)), ("keyfile.cvault", .keyFile(keyFile)), ("device.cvault", .device)] {
            let store = try SealedFileStore.create(
                at: folder.appendingPathComponent(name), key: key, kdf: .insecureTestingOnly, configuration: SealedFileConfiguration(device: device))
            for (credential, value, options) in Self.expected { try store.save(value, for: credential, options: options) }
        }
    }
}
