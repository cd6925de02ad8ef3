import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The benchmark's private scratch space: a 0700 directory for the measured vaults (on the file
/// system the durable-write figures are about), a second one on tmpfs when there is one (for
/// filling large vaults quickly: fsync is free there), and a device identity of its own, so
/// that nothing of the user's (host secret, keyring, vaults) is read or written.
final class Workspace {
    /// Where measured vaults live.
    let root: URL
    /// Where vaults are filled before being copied to `root`.
    let scratch: URL
    let device: DeviceIdentity

    init(base: URL?) throws {
        let parent = base ?? URL(fileURLWithPath: ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp")
        root = try Self.makeTemporaryDirectory(in: parent)
        let shm = URL(fileURLWithPath: "/dev/shm")
        if let fast = try? Self.makeTemporaryDirectory(in: shm) {
            scratch = fast
        } else {
            scratch = root.appendingPathComponent("scratch")
            try Self.makePrivateDirectory(scratch)
        }
        device = DeviceIdentity(hostSecretURL: root.appendingPathComponent("state/host-secret"), machineID: "credvault-bench")
    }

    /// Vault settings using the workspace's device identity.
    var configuration: SealedFileConfiguration { SealedFileConfiguration(device: device) }

    /// The directory of the benchmark's host secret, where the host-file custodian keeps counters.
    var hostStateDirectory: URL { device.hostSecretURL.deletingLastPathComponent() }

    /// A fresh private (0700) directory under `root`.
    func directory(_ name: String) throws -> URL {
        let url = root.appendingPathComponent(name)
        try Self.makePrivateDirectory(url)
        return url
    }

    /// Removes everything the benchmark wrote.
    func remove() {
        try? FileManager.default.removeItem(at: root)
        if !scratch.path.hasPrefix(root.path) { try? FileManager.default.removeItem(at: scratch) }
    }

    /// A private key file (32 random bytes, 0600) for key-file vaults.
    func makeKeyFile(_ name: String) throws -> URL {
        let url = root.appendingPathComponent(name)
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        guard FileManager.default.createFile(atPath: url.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(url.path)")
        }
        return url
    }

    static func makePrivateDirectory(_ url: URL) throws {
        guard mkdir(url.path, 0o700) == 0 || errno == EEXIST else { throw BenchError("cannot create \(url.path)") }
        guard chmod(url.path, 0o700) == 0 else { throw BenchError("cannot chmod \(url.path)") }
    }

    private static func makeTemporaryDirectory(in parent: URL) throws -> URL {
        var template = Array(parent.appendingPathComponent("credvault-bench.XXXXXX").path.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw BenchError("cannot create a directory in \(parent.path)") }
        return URL(fileURLWithPath: template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
}

/// A failure of the benchmark itself (not of the library).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
