import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Vault files written by formats 1.0 to 6.0, kept forever: every future version must still
/// open them and read exactly these values. A new format version gets a new folder, written with
/// CREDVAULT_WRITE_FIXTURES=1 swift test --filter GoldenFixtureTests (it writes the current
/// format's folder and never touches the older ones).
@Suite(.ownThread) final class GoldenFixtureTests {
    static let fixtureRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let versions = ["v1": "1.0", "v2": "2.0", "v3": "3.0", "v4": "4.0", "v5": "5.0", "v6": "6.0"]
    static let passphrase = "golden fixture passphrase v1"
    static let machineID = "golden-fixture-machine-id"
    let dir = TempDirectory()

    static let expected: [(CredentialKey, Data, StorageOptions)] = [
        (CredentialKey(service: "fixture.example", account: "alice"), Data("portable-secret-v1".utf8), .portable),
        (CredentialKey(service: "fixture.example", account: "bob", label: "Bob's token"), Data([0, 1, 2, 0xFF, 0]), .default),
        (CredentialKey(service: "ünïcødé.example", account: "日本"), Data(), .portable),
    ]

    /// The clock the fixtures are written with (from 5.0 on, records carry times): it starts
    /// here and moves one second before each save.
    static let writingStart = Date(timeIntervalSince1970: 1_796_000_000)
    /// In 5.0 fixtures, `expected`'s created and modified times, in seconds after `writingStart`
    /// (the second one saved again at the end of `writeFixtures`).
    static let expectedTimes: [(created: Int, modified: Int)] = [(1, 1), (2, 5), (3, 3)]

    /// Copies the fixtures into a private directory (git does not keep 0600 modes).
    private func privateCopy(_ version: String) throws -> (URL, DeviceIdentity) {
        try Self.privateCopy(version, in: dir)
    }

    /// A private copy of `version`'s fixture folder in `dir`, and the identity of the machine
    /// that wrote it (for other suites that start from a released vault).
    static func privateCopy(_ version: String, in dir: TempDirectory) throws -> (URL, DeviceIdentity) {
        let target = dir.path(version)
        try FileManager.default.copyItem(at: fixtureRoot.appendingPathComponent(version), to: target)
        chmod(target.path, 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: target.path) {
            let path = target.appendingPathComponent(name).path
            if name == "counters" {  // 6.0: the host-file custodian's rollback counters
                chmod(path, 0o700)
                for counter in try FileManager.default.contentsOfDirectory(atPath: path) { chmod(path + "/" + counter, 0o600) }
            } else {
                chmod(path, 0o600)
            }
        }
        return (target, DeviceIdentity(hostSecretURL: target.appendingPathComponent("host-secret"), machineID: machineID))
    }

    /// A private copy of `version`'s passphrase vault and a configuration for its machine.
    private func passphraseCopy(_ version: String) throws -> (URL, SealedFileConfiguration) {
        let (folder, device) = try privateCopy(version)
        return (folder.appendingPathComponent("passphrase.cvault"), SealedFileConfiguration(device: device))
    }

    private func open(_ url: URL, _ configuration: SealedFileConfiguration, passphrase: String = passphrase) throws -> SealedFileStore {
        try SealedFileStore.open(at: url, secret: .passphrase(passphrase), configuration: configuration)
    }

    @Test(arguments: ["v1", "v2", "v3", "v4", "v5", "v6"], ["passphrase.cvault", "keyfile.cvault", "device.cvault"])
    func fixturesOpenAndReadExactly(version: String, name: String) throws {
        let (folder, device) = try privateCopy(version)
        let key: VaultSecret =
            switch name {
            case "passphrase.cvault": .passphrase(Self.passphrase)
            case "keyfile.cvault": .keyFile(folder.appendingPathComponent("keyfile"))
            default: .device
            }
        let store = try SealedFileStore.open(
            at: folder.appendingPathComponent(name), secret: key, configuration: SealedFileConfiguration(device: device))
        #expect(store.formatVersion == Self.versions[version])
        #expect(try store.listKeys().count == Self.expected.count)
        for (n, (credential, value, options)) in Self.expected.enumerated() {
            #expect(try store.load(credential) == value)
            let metadata = try #require(try store.metadata(for: credential))
            #expect(metadata.accessibility == options.accessibility)
            #expect(metadata.key.label == credential.label)
            // Records carry times from 5.0 on; older ones report none.
            let times = Int(version.dropFirst())! >= 5 ? Self.expectedTimes[n] : nil
            #expect(metadata.created == times.map { Self.writingStart.addingTimeInterval(TimeInterval($0.created)) })
            #expect(metadata.modified == times.map { Self.writingStart.addingTimeInterval(TimeInterval($0.modified)) })
            #expect(metadata.expiresAt == nil)
        }
        // 6.0 fixtures have a rollback counter (host-file custody): on another machine, where
        // it is missing, they are refused until a restore is accepted. A device-key vault is not
        // even unlocked there: its key is the other machine's.
        if version == "v6" {
            let refusal: (CredentialVaultError) -> Bool = name == "device.cvault" ? { $0 == .deviceMismatch } : { $0.isRolledBack }
            expectThrows(refusal) {
                _ = try SealedFileStore.open(
                    at: folder.appendingPathComponent(name), secret: key,
                    configuration: SealedFileConfiguration(device: TestVault.device(in: self.dir, name: "other")))
            }
            #expect(store.hasRollbackCounter && store.custody == .file)
        } else if name != "device.cvault" {
            // On another machine the device-only record is refused, the portable ones open.
            let elsewhere = try SealedFileStore.open(
                at: folder.appendingPathComponent(name), secret: key,
                configuration: SealedFileConfiguration(device: TestVault.device(in: dir, name: "other")))
            #expect(try elsewhere.load(Self.expected[0].0) == Self.expected[0].1)
            #expect(throws: CredentialVaultError.deviceMismatch) { try elsewhere.load(Self.expected[1].0) }
        }
    }

    /// A version 1 to 4 vault is written back in its own format (older readers keep reading it)
    /// until its key changes: the new key wrap binds the new major version.
    @Test(arguments: ["v1", "v2", "v3", "v4"])
    func anOlderVaultKeepsItsFormatUntilItsKeyChanges(version: String) throws {
        let (url, configuration) = try passphraseCopy(version)
        let store = try open(url, configuration)
        try store.save(Data("new".utf8), for: CredentialKey(service: "s", account: "new"), options: .portable)
        #expect(try LockedVault(url: url).formatVersion == Self.versions[version], "a write keeps the format")
        try store.changeSecret(from: .passphrase(Self.passphrase), to: .passphrase("upgraded"), kdf: .insecureTestingOnly)
        #expect(try LockedVault(url: url).formatVersion == "\(VaultHeader.currentMajor).0")
        try store.save(Data("after".utf8), for: CredentialKey(service: "s", account: "after"), options: .portable)
        let upgraded = try open(url, configuration, passphrase: "upgraded")
        for (credential, value, _) in Self.expected { #expect(try upgraded.load(credential) == value) }
        #expect(try upgraded.load(CredentialKey(service: "s", account: "new")) == Data("new".utf8))
        #expect(try upgraded.load(CredentialKey(service: "s", account: "after")) == Data("after".utf8))
    }

    /// A format 3.0 commit record's MAC does not bind its slot, so a copy of the older one over
    /// the newer decodes: two equal records past the snapshot, which no 3.0 writer leaves
    /// (docs/FORMAT.md). (At 59df243 this read as the older state: the last write undone.)
    @Test func aFormat3VaultWithTheOlderCommitCopiedOverTheNewerIsTampered() throws {
        let (url, configuration) = try passphraseCopy("v3")
        var bytes = Array(try Data(contentsOf: url))
        let records = CommitRecord.offsets.map { bytes[$0..<$0 + CommitRecord.size] }
        let newest = try #require(try open(url, configuration).state.withLock { $0.contents.journal?.newestSlot })
        bytes.replaceSubrange(
            CommitRecord.offsets[newest]..<CommitRecord.offsets[newest] + CommitRecord.size, with: records[1 - newest])
        try Data(bytes).write(to: url)
        #expect(throws: CredentialVaultError.tampered) { try self.open(url, configuration) }
    }

    /// A writer of a format 1 or 2 vault checks the header's generation under the lock rather
    /// than trusting the file's fingerprint (rewrites reuse inode numbers; times move in ticks):
    /// one whose view is stale but whose fingerprint looks current keeps the other's save.
    @Test(arguments: ["v1", "v2"])
    func anOlderFormatWriterWithAStaleViewKeepsTheOtherSave(version: String) throws {
        let (url, configuration) = try passphraseCopy(version)
        let writer = try open(url, configuration)
        let stale = try open(url, configuration)
        try writer.save(Data("theirs".utf8), for: CredentialKey(service: "s", account: "theirs"), options: .portable)
        stale.state.withLock { $0.fingerprint = AtomicFile.fingerprint(FileLocation(path: url.path)) }
        try stale.save(Data("mine".utf8), for: CredentialKey(service: "s", account: "mine"), options: .portable)
        let fresh = try open(url, configuration)
        #expect(try fresh.load(CredentialKey(service: "s", account: "theirs")) == Data("theirs".utf8))
        #expect(try fresh.load(CredentialKey(service: "s", account: "mine")) == Data("mine".utf8))
        #expect(fresh.formatVersion == Self.versions[version])
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CREDVAULT_WRITE_FIXTURES"] == "1"))
    func writeFixtures() throws {
        // The newest format: 6.0, with a rollback counter under the host-file custodian.
        let folder = Self.fixtureRoot.appendingPathComponent("v\(VaultHeader.custodyMajor)")
        guard !FileManager.default.fileExists(atPath: folder.path) else { return }  // never rewrite a released version
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(folder.path, 0o700)
        let secret = folder.appendingPathComponent("host-secret")
        let keyFile = folder.appendingPathComponent("keyfile")
        _ = FileManager.default.createFile(atPath: secret.path, contents: Data((0..<32).map { UInt8($0) }), attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(atPath: keyFile.path, contents: Data((0..<32).map { UInt8(255 - $0) }), attributes: [.posixPermissions: 0o600])
        let device = DeviceIdentity(hostSecretURL: secret, machineID: Self.machineID)
        for (name, key) in [("passphrase.cvault", VaultSecret.passphrase(Self.passphrase)), ("keyfile.cvault", .keyFile(keyFile)), ("device.cvault", .device)] {
            let clock = ManualClock(start: Self.writingStart)
            var configuration = SealedFileConfiguration(device: device, clock: clock)
            configuration.rollbackCounter = true
            let store = try SealedFileStore.create(
                at: folder.appendingPathComponent(name), secret: key, kdf: .insecureTestingOnly, configuration: configuration)
            func save(_ value: Data, _ credential: CredentialKey, _ options: StorageOptions) throws {
                clock.advance(by: .seconds(1))
                try store.save(value, for: credential, options: options)
            }
            for (credential, value, options) in Self.expected { try save(value, credential, options) }
            // From format 3 on: the records into the snapshot (a rewrite), then a journal with a
            // put, a delete and a replacement.
            try store.changeSecret(from: key, to: key, kdf: .insecureTestingOnly)
            let passing = CredentialKey(service: "fixture.example", account: "deleted")
            try save(Data("gone".utf8), passing, .portable)
            try store.delete(passing)
            try save(Self.expected[1].1, Self.expected[1].0, Self.expected[1].2)
        }
    }
}
