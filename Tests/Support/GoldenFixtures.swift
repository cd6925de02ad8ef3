import CredentialVault
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The golden vault files of format 1.0 (Tests/CredentialVaultTests/Fixtures/1.0/, described
/// in docs/FORMAT.md, *Golden fixtures*), kept forever: every later version must still open
/// them and read exactly these values. They are written once, by the library itself, with
/// `CREDVAULT_WRITE_FIXTURES=1 scripts/test.sh --filter 'writeFixtures|writeTheGolden'` (the
/// script also starts the keyring and the TPM the custody fixtures need); a file that exists is
/// never rewritten.
///
/// Made on "a machine" of their own: the host secret `hostSecret` (the folder's `host-secret`)
/// and the machine id `machineID`, with `passphrase` and the key file `keyFile` (the folder's
/// `keyfile`), and a clock starting at `writingStart`.
package enum GoldenFixtures {
    /// The folder of the fixtures.
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CredentialVaultTests/Fixtures/1.0")
    package static let passphrase = "golden fixture passphrase"
    package static let machineID = "golden-fixture-machine-id"
    /// The host secret: bytes 0, 1, ..., 31.
    package static let hostSecret = Data((0..<32).map { UInt8($0) })
    /// The key file: bytes 255, 254, ..., 224.
    package static let keyFile = Data((0..<32).map { UInt8(255 - $0) })

    /// What each fixture holds.
    package static let expected: [(CredentialKey, Data, StorageOptions)] = [
        (CredentialKey(service: "fixture.example", account: "alice"), Data("portable-secret-v1".utf8), .portable),
        (CredentialKey(service: "fixture.example", account: "bob", label: "Bob's token"), Data([0, 1, 2, 0xFF, 0]), .default),
        (CredentialKey(service: "ünïcødé.example", account: "日本"), Data(), .portable),
    ]
    /// The clock the fixtures are written with: it starts here and moves one second before
    /// each save.
    package static let writingStart = Date(timeIntervalSince1970: 1_796_000_000)
    /// `expected`'s created and modified times, in seconds after `writingStart` (the second one
    /// is saved again at the end of `write`).
    package static let expectedTimes: [(created: Int, modified: Int)] = [(1, 1), (2, 5), (3, 3)]

    /// The one save an interrupted-save fixture was writing (`interruptedSave`).
    package static let interrupted = (CredentialKey(service: "fixture.example", account: "interrupted"), Data("the interrupted save".utf8))

    /// Whether this run writes the fixtures that are missing.
    package static var writing: Bool { ProcessInfo.processInfo.environment["CREDVAULT_WRITE_FIXTURES"] == "1" }

    /// The key that unlocks fixture `name` in the folder `folder` (the device key for
    /// `device`, `keyring` and `tpm`, the key file for `keyfile`, else the passphrase).
    package static func key(_ name: String, in folder: URL) -> VaultSecret {
        switch name {
        case "keyfile.cvault": .keyFile(folder.appendingPathComponent("keyfile"))
        case "device.cvault", "keyring.cvault", "tpm.cvault": .device
        default: .passphrase(passphrase)
        }
    }

    /// The identity of the machine that wrote the fixtures, for a copy in `folder`.
    package static func device(in folder: URL) -> DeviceIdentity {
        DeviceIdentity(hostSecretURL: folder.appendingPathComponent("host-secret"), machineID: machineID)
    }

    /// A private copy of the fixtures in `dir` (git keeps no 0600 modes; the library refuses
    /// anything looser), and the identity of the machine that wrote them.
    package static func privateCopy(in dir: TempDirectory) throws -> (URL, DeviceIdentity) {
        let target = dir.path("golden-1.0")
        try FileManager.default.copyItem(at: root, to: target)
        try makePrivate(target)
        return (target, device(in: target))
    }

    private static func makePrivate(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        chmod(url.path, isDirectory.boolValue ? 0o700 : 0o600)
        guard isDirectory.boolValue else { return }
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) { try makePrivate(url.appendingPathComponent(name)) }
    }

    /// The fixture folder, made (0700, with the host secret and the key file) for writing.
    package static func folderForWriting() throws -> URL {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try makePrivate(root)
        for (name, bytes) in [("host-secret", hostSecret), ("keyfile", keyFile)]
        where !FileManager.default.fileExists(atPath: root.appendingPathComponent(name).path) {
            _ = FileManager.default.createFile(atPath: root.appendingPathComponent(name).path, contents: bytes, attributes: [.posixPermissions: 0o600])
        }
        return root
    }

    /// Writes fixture `name` (when missing) with `configuration` (its device is `device(in:)`
    /// of the folder; its clock is set here): `expected`, saved one second apart, moved into the
    /// snapshot by a rewrite, then a journal with a put, a delete and a replacement. Returns the
    /// store, or `nil` when the fixture exists (a released file is never rewritten).
    package static func write(_ name: String, configuration: SealedFileConfiguration, clock: ManualClock) throws -> SealedFileStore? {
        let folder = try folderForWriting()
        let url = folder.appendingPathComponent(name)
        guard !FileManager.default.fileExists(atPath: url.path) else { return nil }
        let key = key(name, in: folder)
        let store = try SealedFileStore.create(at: url, secret: key, kdf: .insecureTestingOnly, configuration: configuration)
        func save(_ value: Data, _ credential: CredentialKey, _ options: StorageOptions) throws {
            clock.advance(by: .seconds(1))
            try store.save(value, for: credential, options: options)
        }
        for (credential, value, options) in expected { try save(value, credential, options) }
        try store.changeSecret(from: key, to: key, kdf: .insecureTestingOnly)  // the records into the snapshot
        let passing = CredentialKey(service: "fixture.example", account: "deleted")
        try save(Data("gone".utf8), passing, .portable)
        _ = try store.delete(passing)
        try save(expected[1].1, expected[1].0, expected[1].2)
        return store
    }

    /// Removes what writing leaves beside the fixtures and no reader needs: the lock files and
    /// the host secret's fingerprint (`host-secret.id`).
    package static func tidyAfterWriting() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: root.path) where name.hasSuffix(".lock") || name == "host-secret.id" {
            try FileManager.default.removeItem(at: root.appendingPathComponent(name))
        }
    }

    /// A configuration of the machine that wrote the fixtures in `folder`, with `clock`.
    package static func configuration(in folder: URL, clock: ManualClock = ManualClock(start: writingStart)) -> SealedFileConfiguration {
        SealedFileConfiguration(device: device(in: folder), clock: clock)
    }

    /// Checks that `store` reads exactly `expected`, with their times.
    package static func expectExactContents(_ store: SealedFileStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(store.formatVersion == "1.0", sourceLocation: sourceLocation)
        #expect(try store.listKeys().count == expected.count, sourceLocation: sourceLocation)
        for (n, (credential, value, options)) in expected.enumerated() {
            #expect(try store.load(credential) == value, sourceLocation: sourceLocation)
            let metadata = try #require(try store.metadata(for: credential), sourceLocation: sourceLocation)
            #expect(metadata.accessibility == options.accessibility, sourceLocation: sourceLocation)
            #expect(metadata.key.label == credential.label, sourceLocation: sourceLocation)
            #expect(metadata.created == writingStart.addingTimeInterval(TimeInterval(expectedTimes[n].created)), sourceLocation: sourceLocation)
            #expect(metadata.modified == writingStart.addingTimeInterval(TimeInterval(expectedTimes[n].modified)), sourceLocation: sourceLocation)
            #expect(metadata.expiresAt == nil, sourceLocation: sourceLocation)
        }
    }

    /// The little-endian integer of `count` bytes at `offset` of `bytes`.
    package static func integer(_ bytes: [UInt8], at offset: Int, _ count: Int) -> UInt64 {
        bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// What the newest commit record of the vault file `bytes` says in clear (docs/FORMAT.md,
    /// *Commit records*: generation at 0, counter reference at 20, counter value at 24), read
    /// without the key, as an independent reader would before checking its MAC.
    package static func newestCounter(_ bytes: [UInt8]) -> (reference: UInt32, value: UInt64) {
        let newest = [4096, 8192].max { integer(bytes, at: $0, 8) < integer(bytes, at: $1, 8) }!
        return (UInt32(integer(bytes, at: newest + 20, 4)), integer(bytes, at: newest + 24, 8))
    }
}
