import CredentialVault
import Foundation

/// What a host of the fleet unlocks the store's data key with. Each enrolled host has its own
/// wrapping of the data key (a row of `fleet_hosts`), so hosts are added and removed without
/// re-sealing a record. A device key is not offered: a shared store is not one device.
///
/// A host enrolled by its public key (`keyPair`) is re-keyed by every rotation without its
/// secret; one enrolled with a key file or passphrase must be enrolled again after a rotation
/// by someone who has that secret (docs/FLEET.md, *Host keys*).
public enum FleetHostSecret: Sendable, CustomStringConvertible {
    /// A key file of 32 bytes to 64 KiB of random data (`credvault keygen`), private (0600);
    /// hashed with BLAKE2b, not stretched.
    case keyFile(URL)
    /// A passphrase, stretched with Argon2id (the parameters stored with the host's wrapping).
    case passphrase(SecureBytes)
    /// This host's private key file (32 bytes to 64 KiB of random data, `credvault keygen`,
    /// private 0600): the host is enrolled by the X25519 public key derived from it
    /// (`publicKey(ofPrivateKeyFile:)`), and any enrolled host seals the data key to it
    /// (libsodium's sealed boxes): an enrolment or a rotation needs no secret of this host's.
    case keyPair(URL)
    /// This device's key pair, enrolled by its public key as `keyPair` is: the private key is
    /// derived from the device's master key (`DeviceIdentity`: its host secret and machine id)
    /// and, with a keyring or TPM `custodian`, from the secret that custodian holds (as the
    /// sealed file's device key is), so it is never in a file of its own and does not leave
    /// the machine. `nil`: the host-secret file custody.
    case device(DeviceIdentity, custodian: (any DeviceCustodian)? = nil)

    /// The public key to enrol for the private key file at `url` (32 bytes; `credvault fleet
    /// public-key` prints it in hex).
    public static func publicKey(ofPrivateKeyFile url: URL) throws(CredentialVaultError) -> Data {
        Data(try HostKeyPair.load(url).publicKey)
    }

    /// The public key to enrol for `key` (a `keyPair` or `device` key); `invalidArgument` for a
    /// key file or passphrase, which are not enrolled by a public key.
    public static func publicKey(of key: FleetHostSecret) throws(CredentialVaultError) -> Data {
        Data(try HostKeyPair.of(key).publicKey)
    }

    /// A passphrase from UTF-8 text.
    public static func passphrase(_ text: String) -> FleetHostSecret {
        .passphrase(SecureBytes(copying: Array(text.utf8)))
    }

    /// How the wrapping is recorded: 1 passphrase, 2 key file (the sealed file's numbering),
    /// 3 public key (a sealed box).
    var source: Int64 {
        switch self {
        case .passphrase: 1
        case .keyFile: 2
        case .keyPair, .device: 3
        }
    }

    /// The kind of key a `key_source` records, in words.
    static func kind(ofSource source: Int64) -> String {
        switch source {
        case 1: "passphrase"
        case 2: "key file"
        case 3: "public key"
        default: "unknown (\(source))"
        }
    }

    /// Redacted: names the kind of key only.
    public var description: String {
        switch self {
        case .keyFile(let url): "key file \(url.path)"
        case .passphrase: "passphrase"
        case .keyPair(let url): "private key file \(url.path)"
        case .device(_, let custodian): "device key (\((custodian?.custody ?? .file).name) custody)"
        }
    }
}

/// One host's wrapping of the data key, as stored in `fleet_hosts`.
struct HostWrapping: Sendable {
    let host: String
    let source: Int64
    let salt: Data
    let opsLimit: Int64
    let memLimit: Int64
    let epoch: Int64
    let wrapped: Data

    /// Key files hold 32 bytes to 64 KiB.
    static let keyFileSizes = 32...65536

    /// Wraps `dataKey` for `host` under `key` (a fresh salt; Argon2id with `kdf` for a passphrase).
    static func make(
        host: String, secret key: FleetHostSecret, kdf: KDFParameters, dataKey: SecureBytes, storeID: Data, epoch: Int64
    ) throws(CredentialVaultError) -> HostWrapping {
        if key.source == 3 {
            return sealed(host: host, publicKey: try HostKeyPair.of(key).publicKey, dataKey: dataKey, storeID: storeID, epoch: epoch)
        }
        let salt = Data(Crypto.randomBytes(Crypto.saltBytes))
        let ops = key.source == 1 ? Int64(kdf.opsLimit) : 0
        let mem = key.source == 1 ? Int64(kdf.memLimitBytes) : 0
        let draft = HostWrapping(host: host, source: key.source, salt: salt, opsLimit: ops, memLimit: mem, epoch: epoch, wrapped: Data())
        let kek = try draft.keyEncryptionKey(key)
        var out: [UInt8] = []
        dataKey.withUnsafeBytes { Crypto.seal($0, key: kek, associatedData: draft.associatedData(storeID: storeID), into: &out) }
        return HostWrapping(host: host, source: key.source, salt: salt, opsLimit: ops, memLimit: mem, epoch: epoch, wrapped: Data(out))
    }

    /// Unwraps the data key; `wrongPassphrase` when `key` is not the one that wrapped it (or
    /// the row, or the store id it is bound to, was edited).
    func unwrap(_ key: FleetHostSecret, storeID: Data) throws(CredentialVaultError) -> SecureBytes {
        guard key.source == source else {
            throw .invalidArgument("host \(host) is enrolled with a \(FleetHostSecret.kind(ofSource: source)), not a \(key)")
        }
        if key.source == 3 { return try openSealed(with: HostKeyPair.of(key), storeID: storeID) }
        let kek = try keyEncryptionKey(key)
        var plain: [UInt8] = []
        defer { wipe(&plain) }
        let ok = wrapped.withUnsafeBytes { Crypto.open($0, key: kek, associatedData: associatedData(storeID: storeID), into: &plain) }
        guard ok, plain.count == Crypto.keyBytes else { throw .wrongPassphrase }
        return SecureBytes(copying: plain)
    }

    /// The key-encryption key: Argon2id over the passphrase with this row's salt and (range
    /// checked) parameters, or BLAKE2b over a label, the salt and the key file.
    private func keyEncryptionKey(_ key: FleetHostSecret) throws(CredentialVaultError) -> SecureBytes {
        switch key {
        case .passphrase(let passphrase):
            // The row's parameters are checked before use: a hostile row must not make a
            // host allocate gigabytes or spin for minutes.
            guard opsLimit > 0, memLimit > 0 else { throw .corrupted("the host's Argon2id parameters are missing") }
            let kdf: KDFParameters
            do throws(CredentialVaultError) {
                kdf = try KDFParameters(opsLimit: UInt64(opsLimit), memLimitBytes: UInt64(memLimit))
            } catch { throw .corrupted("the host's Argon2id parameters are out of range") }
            guard let kek = Crypto.argon2id(passphrase: passphrase, salt: Array(salt), opsLimit: kdf.opsLimit, memLimitBytes: Int(kdf.memLimitBytes))
            else { throw .io("Argon2id could not allocate \(kdf.memLimitBytes >> 20) MiB") }
            return kek
        case .keyPair, .device:
            throw .invalidArgument("a public-key host's wrapping is a sealed box, not wrapped with a key-encryption key")
        case .keyFile(let url):
            let contents = try SecretFile.read(url.path, what: "the key file", limit: Self.keyFileSizes.upperBound)
            guard Self.keyFileSizes.contains(contents.count) else {
                throw .invalidArgument("a key file holds 32 bytes to 64 KiB of random data")
            }
            let label = Array("CredentialVault fleet key file v1\u{0}".utf8)
            return label.withUnsafeBytes { l in
                salt.withUnsafeBytes { s in contents.withUnsafeBytes { c in Crypto.keyedHashKey(key: nil, [l, s, c]) } }
            }
        }
    }

    /// What the wrapping is bound to: the store id and every field of the host's row.
    private func associatedData(storeID: Data) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(Array("CVFLEETK".utf8))
        writer.raw(Array(storeID))
        writer.string16(host)
        writer.u64(UInt64(bitPattern: source))
        writer.raw(Array(salt))
        writer.u64(UInt64(bitPattern: opsLimit))
        writer.u64(UInt64(bitPattern: memLimit))
        writer.u64(UInt64(bitPattern: epoch))
        return writer.bytes
    }
}
