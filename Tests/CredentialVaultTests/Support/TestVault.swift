import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// Helpers for making sealed-file vaults cheaply in tests.
enum TestVault {
    /// The cheapest Argon2id parameters: tests unlock hundreds of times.
    static let kdf = KDFParameters.insecureTestingOnly
    static let passphrase = "correct horse battery staple"

    /// A device identity with its own host secret, playing "this machine" or "another machine".
    /// Another machine has a host secret of its own already (as any machine that ever stored a
    /// device-only credential): a machine without one is told apart (`HostSecret`).
    static func device(in dir: TempDirectory, name: String = "this-machine") -> DeviceIdentity {
        let url = dir.path("\(name)/host-secret")
        if name != "this-machine" && !FileManager.default.fileExists(atPath: url.path) {
            mkdir(url.deletingLastPathComponent().path, 0o700)
            _ = FileManager.default.createFile(atPath: url.path, contents: Data(Crypto.randomBytes(32)), attributes: [.posixPermissions: 0o600])
        }
        return DeviceIdentity(hostSecretURL: url, machineID: "machine-\(name)")
    }

    static func configuration(
        _ dir: TempDirectory, device: String = "this-machine", clock: any CredentialClock = SystemClock(),
        lockTimeout: Duration = .seconds(120)
    ) -> SealedFileConfiguration {
        SealedFileConfiguration(device: self.device(in: dir, name: device), clock: clock, lockTimeout: lockTimeout)
    }

    static func create(
        _ dir: TempDirectory, name: String = "vault/test.cvault", secret key: VaultSecret = .passphrase(passphrase),
        clock: any CredentialClock = SystemClock(), lockTimeout: Duration = .seconds(120)
    ) throws -> SealedFileStore {
        try SealedFileStore.create(
            at: dir.path(name), secret: key, kdf: kdf, configuration: configuration(dir, clock: clock, lockTimeout: lockTimeout))
    }

    /// Writes a 32-byte key file (0600).
    static func keyFile(_ dir: TempDirectory, name: String = "key") throws -> URL {
        let url = dir.path(name)
        let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ name.utf8.count) }
        _ = FileManager.default.createFile(atPath: url.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
        return url
    }

    /// The sealed records (record id → box) a store holds.
    static func sealedRecords(_ store: SealedFileStore) -> [[UInt8]: [UInt8]] {
        store.state.withLock { s in Dictionary(uniqueKeysWithValues: s.contents.records.values.map { ($0.sealed.id, $0.sealed.box) }) }
    }

    /// How many records (ephemeral ones included) a fresh open of `store`'s file finds (a
    /// passphrase vault made by `create`).
    static func storedRecordCount(_ store: SealedFileStore, clock: any CredentialClock) throws -> Int {
        let dir = store.url.deletingLastPathComponent().deletingLastPathComponent()
        let configuration = SealedFileConfiguration(
            device: DeviceIdentity(hostSecretURL: dir.appendingPathComponent("this-machine/host-secret"), machineID: "machine-this-machine"),
            clock: clock)
        let fresh = try LockedVault(url: store.url).unlock(with: .passphrase(passphrase), configuration: configuration)
        return fresh.state.withLock { $0.contents.records.count }
    }

    /// Saves `value` then a newer one under `key` in `store`, puts the older file back, and
    /// opens it with `configuration`: the open must refuse it (`rolledBack`; an open that
    /// succeeds or fails otherwise is an issue or rethrown).
    static func openOlderCopy(of store: SealedFileStore, _ value: Data, for key: CredentialKey, configuration: SealedFileConfiguration) throws {
        try store.save(value, for: key, options: .portable)
        let older = try bytes(store.url)
        try store.save(Data("newer".utf8), for: key, options: .portable)
        try write(older, to: store.url)
        do {
            _ = try SealedFileStore.open(at: store.url, secret: .passphrase(passphrase), configuration: configuration)
            Issue.record("an older copy opened")
        } catch {
            guard case .rolledBack = error else { throw error }
        }
    }

    /// The bytes of a file.
    /// Puts the commit records, snapshot and journal of the vault at `donor` (their MACs
    /// included) in the file at `target`, after `target`'s header: a file that fails its
    /// authentication under `target`'s key (`tampered`), for the tests of what reports it.
    static func graftCommits(of donor: URL, into target: URL) throws {
        var bytes = try bytes(target)
        bytes.replaceSubrange(CommitRecord.offsets[0]..<bytes.count, with: try Self.bytes(donor)[CommitRecord.offsets[0]...])
        try write(bytes, to: target)
    }

    static func bytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }

    /// Overwrites a file in place, keeping its mode.
    static func write(_ bytes: [UInt8], to url: URL) throws {
        try Data(bytes).write(to: url)
        chmod(url.path, 0o600)
    }
}


extension HelperProcess {
    /// The environment that gives the helper the same device identity as `TestVault`.
    static func environment(_ dir: TempDirectory, device: String = "this-machine") -> [String: String] {
        let identity = TestVault.device(in: dir, name: device)
        return [
            "CREDVAULT_TEST_HOST_SECRET": identity.hostSecretURL.path, "CREDVAULT_TEST_MACHINE_ID": identity.machineID,
        ]
    }
}
