import CredentialVault
import Foundation

/// A sealed-file vault in a fresh temporary directory, unlocked with a passphrase
/// (fast KDF parameters), removed when released.
final class TemporaryVault: Sendable {
    let directory: URL
    let url: URL
    static let passphrase = "test passphrase"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-auth-\(UUID().uuidString)")
        url = directory.appendingPathComponent("vault.cvault")
        _ = try SealedFileStore.create(at: url, secret: .passphrase(Self.passphrase), kdf: .insecureTestingOnly)
    }

    /// A new store object over the file (as a new process would open it).
    func open() throws -> SealedFileStore {
        try SealedFileStore.open(at: url, secret: .passphrase(Self.passphrase))
    }

    /// The environment that lets `credvault` open this vault: the passphrase in a file only
    /// its owner can read (others are refused), named by `CREDVAULT_PASSPHRASE_FILE`.
    func cliEnvironment() throws -> [String: String] {
        let file = directory.appendingPathComponent("passphrase")
        try Data(Self.passphrase.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return ["CREDVAULT_PASSPHRASE_FILE": file.path]
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}
