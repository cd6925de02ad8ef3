import CredentialVault
import Foundation

/// A host's X25519 key pair, made when used from the one secret kept: its private key file
/// (seed = BLAKE2b-256, unkeyed, of `"CredentialVault fleet host key pair v1\0"` || the file's
/// bytes) or its device (seed = the device key for context `CVFLTHST`: `DeviceIdentity`), then
/// `crypto_box_seed_keypair(seed)`.
struct HostKeyPair {
    let publicKey: [UInt8]
    let secretKey: SecureBytes

    /// The key pair of a `keyPair` or `device` host key.
    static func of(_ key: FleetHostSecret) throws(CredentialVaultError) -> HostKeyPair {
        switch key {
        case .keyPair(let url): return try load(url)
        case .device(let identity, let custodian):
            let pair = Crypto.boxKeyPair(seed: try identity.deviceKey(custodian: custodian, context: "CVFLTHST"))
            return HostKeyPair(publicKey: pair.publicKey, secretKey: pair.secretKey)
        case .keyFile, .passphrase:
            throw .invalidArgument("a host with a key file or passphrase is not enrolled by a public key: use a private key file or the device key")
        }
    }

    /// Reads the private key file (checked as a key file is: private, 32 bytes to 64 KiB).
    static func load(_ url: URL) throws(CredentialVaultError) -> HostKeyPair {
        let contents = try SecretFile.read(url.path, what: "the fleet private key file", limit: HostWrapping.keyFileSizes.upperBound)
        guard HostWrapping.keyFileSizes.contains(contents.count) else {
            throw .invalidArgument("a fleet private key file holds 32 bytes to 64 KiB of random data (credvault keygen)")
        }
        let label = Array("CredentialVault fleet host key pair v1\u{0}".utf8)
        let seed = label.withUnsafeBytes { l in contents.withUnsafeBytes { c in Crypto.keyedHashKey(key: nil, [l, c]) } }
        let pair = Crypto.boxKeyPair(seed: seed)
        return HostKeyPair(publicKey: pair.publicKey, secretKey: pair.secretKey)
    }
}

/// Wrappings by public key (`key_source` 3): the data key sealed to the host's X25519 public
/// key (`salt` holds the public key; `ops_limit` and `mem_limit` are 0).
extension HostWrapping {
    /// The sealed plaintext's first part, which binds it to its store, host and epoch:
    /// `"CVFLEETB"` || store_id || u16 len + host || u64 key_epoch; the data key follows.
    static func boxPrefix(host: String, storeID: Data, epoch: Int64) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(Array("CVFLEETB".utf8))
        writer.raw(Array(storeID))
        writer.string16(host)
        writer.u64(UInt64(bitPattern: epoch))
        return writer.bytes
    }

    /// The data key sealed to `publicKey` for `host`, followed by its enrolment tag
    /// (`enrolmentTag`). Anyone can make a box (the database's administrator too): the key it
    /// carries is believed only through the rotation chain (`FleetKeyChain`) when the host knew
    /// an earlier key.
    static func sealed(host: String, publicKey: [UInt8], dataKey: SecureBytes, storeID: Data, epoch: Int64) -> HostWrapping {
        var payload = boxPrefix(host: host, storeID: storeID, epoch: epoch)
        dataKey.withUnsafeBytes { payload.append(contentsOf: $0) }
        let box = payload.withUnsafeBytes { Crypto.sealBox($0, to: publicKey) }
        wipe(&payload)
        let tag = enrolmentTag(host: host, publicKey: publicKey, dataKey: dataKey, storeID: storeID, epoch: epoch)
        return HostWrapping(host: host, source: 3, salt: Data(publicKey), opsLimit: 0, memLimit: 0, epoch: epoch, wrapped: Data(box + tag))
    }

    /// Keyed BLAKE2b-256 (key: subkey 5, context `CVFLTENR`, of the data key) of `"CVFLTEN1"` ||
    /// store_id || u16 len + host || public key (32) || u64 key_epoch, appended to the box.
    /// Why: a rotation seals the new data key to every host enrolled by public key, and the
    /// public key is read from `fleet_hosts`, which the database's administrator can write: a
    /// rotation re-keys only a row whose tag a holder of the current data key made, so a row
    /// put in or edited without it (a public key of the administrator's) gets nothing.
    static func enrolmentTag(host: String, publicKey: [UInt8], dataKey: SecureBytes, storeID: Data, epoch: Int64) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(Array("CVFLTEN1".utf8))
        writer.raw(Array(storeID))
        writer.string16(host)
        writer.raw(publicKey)
        writer.u64(UInt64(bitPattern: epoch))
        return writer.bytes.withUnsafeBytes { Crypto.keyedHash(key: Crypto.subkey(of: dataKey, id: 5, context: "CVFLTENR"), [$0]) }
    }

    /// The length of the box for `host` (without the tag).
    private static func boxBytes(host: String, storeID: Data, epoch: Int64) -> Int {
        boxPrefix(host: host, storeID: storeID, epoch: epoch).count + Crypto.keyBytes + Crypto.boxSealOverhead
    }

    /// Whether this public-key row was enrolled by a holder of `dataKey` (the key of its
    /// epoch): its tag matches its host, public key and epoch. A rotation re-keys only these.
    func isEnrolled(by dataKey: SecureBytes, storeID: Data) -> Bool {
        let boxCount = Self.boxBytes(host: host, storeID: storeID, epoch: epoch)
        guard source == 3, salt.count == Crypto.boxPublicKeyBytes, wrapped.count == boxCount + Crypto.macBytes else { return false }
        let tag = Self.enrolmentTag(host: host, publicKey: Array(salt), dataKey: dataKey, storeID: storeID, epoch: epoch)
        return constantTimeEquals(wrapped.suffix(Crypto.macBytes), Data(tag))
    }

    /// Opens this (public-key) wrapping with the host's key pair: `wrongPassphrase` when it is
    /// sealed to another key, `tampered` when what it holds is not for this store, host and epoch.
    func openSealed(with pair: HostKeyPair, storeID: Data) throws(CredentialVaultError) -> SecureBytes {
        guard constantTimeEquals(Data(pair.publicKey), salt) else { throw .wrongPassphrase }
        // The box, without the enrolment tag that follows it (checked by rotations).
        let box = wrapped.prefix(Self.boxBytes(host: host, storeID: storeID, epoch: epoch))
        guard let plain = box.withUnsafeBytes({ Crypto.openBox($0, publicKey: pair.publicKey, secretKey: pair.secretKey) }) else {
            throw .wrongPassphrase
        }
        let prefix = Self.boxPrefix(host: host, storeID: storeID, epoch: epoch)
        return try plain.withUnsafeBytes { (raw) throws(CredentialVaultError) -> SecureBytes in
            guard raw.count == prefix.count + Crypto.keyBytes, raw.prefix(prefix.count).elementsEqual(prefix) else { throw .tampered }
            return SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[prefix.count...]))
        }
    }
}
