import CredentialVault
import Foundation

/// A key-file vault grown to a given number of credentials. It is filled on the workspace's
/// scratch file system (tmpfs when there is one: each save rewrites and fsyncs the whole file,
/// so filling 10,000 items on disk would take minutes), then copied to the directory where it
/// is measured. The copy is the same vault byte for byte: nothing binds a vault to its path.
final class VaultFixture {
    let keyFile: URL
    private let workspace: Workspace
    private let store: SealedFileStore
    private let url: URL
    private(set) var count = 0

    init(workspace: Workspace, name: String) throws {
        self.workspace = workspace
        keyFile = try workspace.makeKeyFile("\(name).key")
        let directory = workspace.scratch.appendingPathComponent(name)
        try Workspace.makePrivateDirectory(directory)
        url = directory.appendingPathComponent("vault.cvault")
        store = try SealedFileStore.create(at: url, secret: .keyFile(keyFile), configuration: workspace.configuration)
    }

    var secret: VaultSecret { .keyFile(keyFile) }

    /// The `index`th credential's name: 16 services, one account each.
    static func credentialKey(_ index: Int) -> CredentialKey {
        CredentialKey(service: "svc-\(index % 16).example.com", account: "account-\(index)")
    }

    /// Adds credentials (device-only, the default) until the vault holds `target`.
    func grow(to target: Int, value: Data) throws {
        while count < target {
            try store.save(value, for: Self.credentialKey(count), options: .default)
            count += 1
        }
    }

    /// Copies the vault file (0600) into `directory` (0700) and returns the copy's URL.
    func copy(to directory: URL) throws -> URL {
        let copy = directory.appendingPathComponent("vault.cvault")
        let bytes = try Data(contentsOf: url)
        guard FileManager.default.createFile(atPath: copy.path, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(copy.path)")
        }
        return copy
    }
}
