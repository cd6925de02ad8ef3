#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key hierarchy: a random 256-bit data key encrypts everything; a key-encryption key (KEK)
/// derived from the passphrase, key file or device key wraps it. Changing the passphrase
/// re-wraps the data key (records untouched); rotation makes a new data key.
enum KeyWrapping {
    /// Minimum and maximum size of a key file.
    static let keyFileSizes = 32...65536

    /// Derives the KEK for `key` with the header's source, KDF parameters and salt: exactly one
    /// Argon2id run for a passphrase, a BLAKE2b hash for a key file or the device key.
    /// `hostSecretNeed` says what depends on the host secret if it is missing (by default: this
    /// device-key vault, so a missing one is an error, not a new secret).
    static func keyEncryptionKey(
        _ key: VaultSecret, header: VaultHeader, configuration: SealedFileConfiguration,
        hostSecretNeed: () -> HostSecret.Need = { .deviceKeyVault }
    ) throws(CredentialVaultError) -> SecureBytes {
        switch (key, header.keySource) {
        case (.passphrase(let passphrase), .passphrase):
            configuration.beforePassphraseDerivation()
            guard let kek = Crypto.argon2id(
                passphrase: passphrase, salt: header.salt, opsLimit: header.opsLimit,
                memLimitBytes: Int(header.memLimitBytes))
            else { throw .io("Argon2id could not allocate \(header.memLimitBytes >> 20) MiB") }
            return kek
        case (.keyFile(let url), .keyFile):
            // The same checks as every private file's, read into guarded memory (`SecretFile`).
            let contents = try SecretFile.read(url.path, what: "the key file", limit: keyFileSizes.upperBound)
            guard keyFileSizes.contains(contents.count) else {
                throw .invalidArgument("a key file holds 32 bytes to 64 KiB of random data")
            }
            let label = Array("CredentialVault key file v1\u{0}".utf8)
            return label.withUnsafeBytes { l in
                header.salt.withUnsafeBytes { s in contents.withUnsafeBytes { c in Crypto.keyedHashKey(key: nil, [l, s, c]) } }
            }
        case (.device, .device):
            return deviceKEK(master: try configuration.masterKey(custody: header.custody, need: hostSecretNeed), header: header)
        default:
            throw .invalidArgument("this vault is unlocked with its \(header.keySource), not a \(key)")
        }
    }

    /// The KEK of a device-key vault from the device master key.
    static func deviceKEK(master: SecureBytes, header: VaultHeader) -> SecureBytes {
        let base = Crypto.subkey(of: master, id: 1, context: "CVDEVKEK")
        return header.salt.withUnsafeBytes { Crypto.keyedHashKey(key: base, [$0]) }
    }

    /// Wraps the data key, bound to the header's first 64 bytes (version, id, key parameters).
    static func wrap(_ dataKey: SecureBytes, kek: SecureBytes, header: VaultHeader) -> [UInt8] {
        var out: [UInt8] = []
        dataKey.withUnsafeBytes { Crypto.seal($0, key: kek, associatedData: header.keyParameterBytes(), into: &out) }
        return out
    }

    /// Unwraps the data key; `wrongPassphrase` (or `deviceMismatch` for a device-key vault)
    /// when the KEK is not the one that wrapped it.
    static func unwrap(header: VaultHeader, kek: SecureBytes) throws(CredentialVaultError) -> SecureBytes {
        var plain: [UInt8] = []
        defer { wipe(&plain) }
        let ok = header.wrappedKey.withUnsafeBytes {
            Crypto.open($0, key: kek, associatedData: header.keyParameterBytes(), into: &plain)
        }
        guard ok, plain.count == Crypto.keyBytes else {
            throw header.keySource == .device ? .deviceMismatch : .wrongPassphrase
        }
        return SecureBytes(copying: plain)
    }
}

/// The keys of an unlocked vault, each derived for one purpose from the data key.
struct VaultKeys: Sendable {
    let dataKey: SecureBytes
    /// Seals records.
    let recordKey: SecureBytes
    /// Authenticates the whole file.
    let macKey: SecureBytes

    init(dataKey: SecureBytes) {
        self.dataKey = dataKey
        recordKey = Crypto.subkey(of: dataKey, id: 1, context: "CVRECORD")
        macKey = Crypto.subkey(of: dataKey, id: 2, context: "CVFILMAC")
    }

    /// The device-only record key of one vault on this machine (`need`: see `DeviceIdentity.masterKey`).
    static func deviceRecordKey(
        configuration: SealedFileConfiguration, custody: DeviceCustody, vaultID: [UInt8], need: () -> HostSecret.Need
    ) throws(CredentialVaultError) -> SecureBytes {
        deviceRecordKey(master: try configuration.masterKey(custody: custody, need: need), vaultID: vaultID)
    }

    /// The device-only record key of one vault from the device master key.
    static func deviceRecordKey(master: SecureBytes, vaultID: [UInt8]) -> SecureBytes {
        let base = Crypto.subkey(of: master, id: 2, context: "CVDEVREC")
        return vaultID.withUnsafeBytes { Crypto.keyedHashKey(key: base, [$0]) }
    }
}
