#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

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
    /// Who keeps its device secret and rollback counter.
    public var custody: DeviceCustody { header.custody }
    /// Whether it has a rollback counter.
    public var hasRollbackCounter: Bool { header.hasRollbackCounter }
    let header: VaultHeader
    let bytes: [UInt8]
    let fingerprint: AtomicFile.Fingerprint
    /// The vault file, in its directory opened and checked once: every later read and write of
    /// the unlocked store goes through that directory's descriptor.
    let location: FileLocation

    /// Reads the vault at `url`. Throws `notAvailable` when there is no file, `permissionDenied`
    /// when it or its directory is accessible by others or belongs to another user,
    /// `invalidArgument` for a symbolic link, a file with several hard links or something that is
    /// not a regular file (a FIFO, a directory, a device), `corrupted`/`unsupported` for a file
    /// that is not a vault this library can read or is larger than 1 GiB. Every check is made
    /// on the opened descriptor before a byte is read.
    public init(url: URL) throws(CredentialVaultError) {
        guard let directory = try PrivateDirectory.open(url.deletingLastPathComponent().path, owners: .notWritableByOthers),
            let (bytes, fingerprint) = try PrivateFiles.readVersion(FileLocation(url.lastPathComponent, in: directory), rules: .vault)
        else {
            throw .notAvailable("no vault at \(url.path); create one first")
        }
        self.url = url
        self.bytes = bytes
        self.fingerprint = fingerprint
        location = FileLocation(url.lastPathComponent, in: directory)
        header = try VaultFile.header(of: bytes)
        keySource = header.keySource
        kdf = header.kdf == .argon2id13 ? try? KDFParameters(opsLimit: header.opsLimit, memLimitBytes: header.memLimitBytes) : nil
        formatVersion = header.version
    }

    /// Unlocks the vault: one key derivation, then the data key is unwrapped and the file
    /// authenticated. Throws `wrongPassphrase` (or `deviceMismatch` for a device-key vault from
    /// another machine), `tampered` or `corrupted`; nothing on disk is changed by a failure.
    /// Throws `rolledBack` when the file is older than its rollback counter, and `notAvailable`
    /// when its custodian is not among `configuration.custodians`.
    public func unlock(
        with key: VaultSecret, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) -> SealedFileStore {
        try unlock(with: key, configuration: configuration, acceptingRollback: false)
    }

    /// `unlock`, optionally without the rollback check (`SealedFileStore.acceptRestore`).
    ///
    /// The file was read before the key derivation, and the counters are asked after it: a save
    /// or custody move by another process in between leaves this read older than the counters
    /// (or the mark, or the TPM's anchor), which is not a rollback. A refusal when the file has
    /// changed since it was read reads it again; a copy put back that stays there is refused
    /// on the read that finds it unchanged.
    func unlock(
        with key: VaultSecret, configuration: SealedFileConfiguration, acceptingRollback: Bool
    ) throws(CredentialVaultError) -> SealedFileStore {
        var vault = self
        // Bounded: a vault saved again during every key derivation is refused after a few.
        for _ in 0..<Self.rereadsAfterARace {
            do throws(CredentialVaultError) {
                return try vault.unlockOnce(with: key, configuration: configuration, acceptingRollback: acceptingRollback)
            } catch .rolledBack(let why) {
                guard AtomicFile.fingerprint(vault.location) != vault.fingerprint, let again = try? LockedVault(url: url) else {
                    configuration.logRefusal(.rolledBack(why), vault: location.path)
                    throw .rolledBack(why)
                }
                configuration.logger.debug(
                    "the vault changed while it was being unlocked, and its counter was ahead of the copy read: reading it again",
                    metadata: ["vault": .string(location.path)])
                vault = again
            }
        }
        do throws(CredentialVaultError) {
            return try vault.unlockOnce(with: key, configuration: configuration, acceptingRollback: acceptingRollback)
        } catch {
            if case .rolledBack = error { configuration.logRefusal(error, vault: location.path) }
            throw error
        }
    }

    /// How many times `unlock` reads a file again that changed while it was being unlocked.
    static let rereadsAfterARace = 3

    private func unlockOnce(
        with key: VaultSecret, configuration: SealedFileConfiguration, acceptingRollback: Bool
    ) throws(CredentialVaultError) -> SealedFileStore {
        let kek: SecureBytes
        var deviceKey: SecureBytes?
        if case .device = key, header.keySource == .device {
            // One device master key (one custodian secret: one TPM unseal) for the unlock and the
            // device-only records both.
            let master = try configuration.masterKey(custody: header.custody, need: { .deviceKeyVault })
            kek = KeyWrapping.deviceKEK(master: master, header: header)
            deviceKey = VaultKeys.deviceRecordKey(master: master, vaultID: header.vaultID)
        } else {
            kek = try KeyWrapping.keyEncryptionKey(key, header: header, configuration: configuration)
        }
        return try unlock(kek: kek, deviceKey: deviceKey, configuration: configuration, acceptingRollback: acceptingRollback)
    }

    /// The unlock once the key-encryption key is known (derived, or from the key cache).
    func unlock(
        kek: SecureBytes, deviceKey: SecureBytes? = nil, configuration: SealedFileConfiguration, acceptingRollback: Bool = false
    ) throws(CredentialVaultError) -> SealedFileStore {
        let keys: VaultKeys, contents: VaultContents, fingerprint: AtomicFile.Fingerprint
        do throws(CredentialVaultError) {
            keys = VaultKeys(dataKey: try KeyWrapping.unwrap(header: header, kek: kek))
            (contents, fingerprint) = try VaultContents.decodeUnlocked(
                bytes: bytes, fingerprint: self.fingerprint, header: header, keys: keys, location: location)
        } catch {
            configuration.logRefusal(error, vault: location.path)
            throw error
        }
        return try SealedFileStore(
            url: url, location: location, keys: keys, contents: contents, fingerprint: fingerprint, configuration: configuration,
            deviceKey: deviceKey, acceptingRollback: acceptingRollback)
    }
}

extension LockedVault {
    /// Whether a restore can be waiting for `acceptRestore`: the vault has a rollback counter,
    /// or it has none but this machine recorded that it got one (this file is a copy from
    /// before the counter), or another custodian holds a counter of it (a copy from before a
    /// move). Throws when that cannot be known (see
    /// `SealedFileConfiguration.isMarkedRollbackProtected`, `anchoredCounter`).
    package func mayBeARestore(configuration: SealedFileConfiguration) throws(CredentialVaultError) -> Bool {
        if hasRollbackCounter { return true }
        if try configuration.isMarkedRollbackProtected(header.vaultID) { return true }
        return try configuration.anchoredCounter(of: header.vaultID, besides: custody) != nil
    }
}
