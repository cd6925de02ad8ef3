import CredentialVaultTestSupport
import Foundation

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

    /// The bytes of a file.
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
