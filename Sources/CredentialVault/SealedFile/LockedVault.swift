import Foundation

/// A sealed-file vault that has been read but not unlocked: its header can be inspected (format
/// version, how it is unlocked, KDF cost) and nothing else. `unlock(with:)` returns the
/// unlocked `SealedFileStore`; the two states are different types, so no code can read
/// records from a locked vault by mistake.
public struct LockedVault: Sendable {
    /// The vault file.
    public let url: URL
    /// What unlocks it.
    public let keySource: KeySource
    /// The Argon2id parameters, for a passphrase vault.
    public let kdf: KDFParameters?
    /// The file's format version, for example `"1.0"`.
    public let formatVersion: String
    let header: VaultHeader
    let bytes: [UInt8]
    let fingerprint: AtomicFile.Fingerprint

    /// Reads the vault at `url`. Throws `notAvailable` when there is no file, `permissionDenied`
    /// when it or its directory is accessible by others, `corrupted`/`unsupported` for a file
    /// that is not a vault this library can read.
    public init(url: URL) throws(CredentialVaultError) {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw .notAvailable("no vault at \(url.path); create one first (credvault init or store)")
        }
        try PrivateFiles.checkPrivate(url.deletingLastPathComponent().path, isDirectory: true)
        guard let (bytes, fingerprint) = try PrivateFiles.readVersion(url.path, limit: VaultFile.maxSize) else {
            throw .notAvailable("no vault at \(url.path); create one first (credvault init)")
        }
        try PrivateFiles.checkPrivate(url.path, isDirectory: false)
        self.url = url
        self.bytes = bytes
        self.fingerprint = fingerprint
        header = try VaultFile.header(of: bytes)
        keySource = header.keySource
        kdf = header.kdf == .argon2id13 ? try? KDFParameters(opsLimit: header.opsLimit, memLimitBytes: header.memLimitBytes) : nil
        formatVersion = "\(header.major).\(header.minor)"
    }

    /// Unlocks the vault: one key derivation, then the data key is unwrapped and the file
    /// authenticated. Throws `wrongPassphrase` (or `deviceMismatch` for a device-key vault from
    /// another machine), `tampered` or `corrupted`; nothing on disk is changed by a failure.
    public func unlock(
        with key: VaultKey, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        let kek = try KeyWrapping.keyEncryptionKey(key, header: header, device: configuration.resolvedDevice)
        let keys = VaultKeys(dataKey: try KeyWrapping.unwrap(header: header, kek: kek))
        let contents = try VaultContents.decode(bytes: bytes, header: header, keys: keys)
        return try SealedFileStore(
            url: url, keys: keys, contents: contents, fingerprint: fingerprint, configuration: configuration)
    }
}
