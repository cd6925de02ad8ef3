/// The fixed-size header of a sealed-file vault, format 1.0 (docs/FORMAT.md, *Header*).
///
///     offset size field
///          0    8 magic "CRDVAULT"
///          8    2 format major (1)            little-endian, like every integer here
///         10    2 format minor (0)            informational: readers ignore it
///         12    4 incompatible features       a reader refuses a bit it does not know
///         16    4 compatible features         a reader ignores a bit it does not know
///         20   16 vault id (random)
///         36    1 key source (1 passphrase, 2 key file, 3 device key)
///         37    1 KDF (0 none, 1 Argon2id v1.3)
///         38    1 custody: 0 host-secret file, 1 login keyring, 2 TPM
///         39    1 flags: bit 0 rollback counter
///         40    8 KDF ops limit
///         48    8 KDF memory limit in bytes
///         56   16 salt
///         72   72 wrapped data key: nonce(24) ciphertext(32) tag(16); associated data = bytes 0..<72
///        144    8 generation of the snapshot
///        152    4 record count of the snapshot
///
/// Bytes 0..<72 (the key parameters) are authenticated by the data-key wrapping, and the whole
/// header by the snapshot MAC, so no field can be changed undetected.
///
/// Why feature bits and not new majors: a later addition sets a bit instead of a new layout, so
/// an older reader says precisely what it can do. An addition it cannot read safely (a new
/// layout, a check it would skip) is an incompatible feature: the older reader refuses the file
/// with "newer format, upgrade" rather than reading it wrong or calling it tampered. An addition
/// it can ignore is a compatible one; as an older writer keeps the key parameters of a file it
/// does not re-wrap and clears the bits it does not know when it re-wraps, such a feature must
/// stay valid either way.
struct VaultHeader: Equatable {
    static let magic: [UInt8] = Array("CRDVAULT".utf8)
    /// The one major version this library reads and writes. Any other major is another format.
    static let major: UInt16 = 1
    /// Written as 0; read and reported, never acted on (additions use the feature bits).
    static let currentMinor: UInt16 = 0
    /// The incompatible feature bits this library knows (1.0 defines none): any other bit set is
    /// a newer format it must not read.
    static let knownIncompatibleFeatures: UInt32 = 0
    /// The compatible feature bits this library knows (1.0 defines none): it writes only these.
    static let knownCompatibleFeatures: UInt32 = 0
    /// Flags bit 0: the commit records' counter is checked against the custodian's. Any other
    /// bit is `corrupted`: a new flag comes with a feature bit, so an older reader is told by
    /// the feature bits, never by an unknown flag.
    static let rollbackCounterFlag: UInt8 = 1
    /// The key parameters: everything before the wrapped key, its associated data.
    static let keyParametersSize = 72
    static let wrappedKeySize = Crypto.keyBytes + Crypto.sealOverhead
    /// The generation (u64) and record count (u32) of the snapshot follow the wrapped key.
    static let size = keyParametersSize + wrappedKeySize + 8 + 4
    static let idSize = 16

    /// Where each field starts (the layout above; the encoder writes them in this order), for
    /// code that reads or edits one field of a file in place.
    enum Offset {
        static let major = 8, minor = 10, incompatibleFeatures = 12, compatibleFeatures = 16, vaultID = 20
        static let keySource = 36, kdf = 37, custody = 38, flags = 39, opsLimit = 40, memLimit = 48, salt = 56
        static let wrappedKey = 72, generation = 144, recordCount = 152
    }

    enum KDF: UInt8 {
        case none = 0
        case argon2id13 = 1
    }

    var minor: UInt16 = currentMinor
    var incompatibleFeatures: UInt32 = 0
    /// As read: a compatible bit this library does not know is kept as long as the data key is
    /// not wrapped again (it is part of the wrap's associated data); a new wrap writes none.
    var compatibleFeatures: UInt32 = 0
    var vaultID: [UInt8]
    var keySource: KeySource
    var kdf: KDF
    var opsLimit: UInt64
    var memLimitBytes: UInt64
    var salt: [UInt8]
    var wrappedKey: [UInt8]
    var generation: UInt64
    var recordCount: UInt32
    /// Who keeps the device secret (and the rollback counter, with one).
    var custody: DeviceCustody = .file
    /// Whether the commit records' counter is checked against the custodian's.
    var hasRollbackCounter = false

    /// The format version the header names, for example `"1.0"`.
    var version: String { "\(Self.major).\(minor)" }

    /// The key parameters: what the wrapped data key is bound to.
    func keyParameterBytes() -> [UInt8] {
        var w = ByteWriter(capacity: Self.keyParametersSize)
        w.raw(Self.magic)
        w.u16(Self.major)
        w.u16(minor)
        w.u32(incompatibleFeatures)
        w.u32(compatibleFeatures)
        w.raw(vaultID)
        w.u8(keySource.rawValue)
        w.u8(kdf.rawValue)
        w.u8(custody.rawValue)
        w.u8(hasRollbackCounter ? Self.rollbackCounterFlag : 0)
        w.u64(opsLimit)
        w.u64(memLimitBytes)
        w.raw(salt)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        w.raw(keyParameterBytes())
        w.raw(wrappedKey)
        w.u64(generation)
        w.u32(recordCount)
    }

    /// Parses and validates the header at the start of `bytes` (see `decode(_:)`).
    static func decode(bytes: [UInt8]) throws(CredentialVaultError) -> VaultHeader {
        // Array.withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        try bytes.withUnsafeBytes { raw in
            Result { () throws(CredentialVaultError) -> VaultHeader in
                var reader = ByteReader(raw)
                return try decode(&reader)
            }
        }.get()
    }

    /// Parses and validates the header. Errors: `corrupted` (not a vault, truncated, bad field),
    /// `unsupported` (another major, an incompatible feature or a custodian this library does
    /// not know: a newer format).
    static func decode(_ reader: inout ByteReader) throws(CredentialVaultError) -> VaultHeader {
        guard let magic = reader.bytes(8) else { throw .corrupted("file too short to be a vault") }
        guard magic == Self.magic else { throw .corrupted("not a CredentialVault file") }
        guard let major = reader.u16(), let minor = reader.u16() else { throw .corrupted("truncated header") }
        guard major == Self.major else {
            guard major != 0 else {
                throw .unsupported("vault format 0.\(minor) is not a CredentialVault format (this library reads 1.x)")
            }
            throw .unsupported("vault format \(major).\(minor) is newer than this library (it reads 1.x); upgrade CredentialVault")
        }
        guard let incompatible = reader.u32(), let compatible = reader.u32() else { throw .corrupted("truncated header") }
        let unknown = incompatible & ~knownIncompatibleFeatures
        guard unknown == 0 else {
            throw .unsupported(
                "this vault uses features (0x\(String(unknown, radix: 16))) of a newer format than this library reads; upgrade CredentialVault")
        }
        guard let id = reader.bytes(idSize), let sourceByte = reader.u8(), let kdfByte = reader.u8(),
            let custodyByte = reader.u8(), let flags = reader.u8(), let ops = reader.u64(), let mem = reader.u64(),
            let salt = reader.bytes(Crypto.saltBytes), let wrapped = reader.bytes(wrappedKeySize),
            let generation = reader.u64(), let count = reader.u32()
        else { throw .corrupted("truncated header") }
        guard let source = KeySource(rawValue: sourceByte) else { throw .corrupted("unknown key source \(sourceByte)") }
        guard let kdf = KDF(rawValue: kdfByte) else { throw .corrupted("unknown KDF \(kdfByte)") }
        guard flags & ~rollbackCounterFlag == 0 else { throw .corrupted("unknown header flags \(flags)") }
        // Never read as a weaker custodian: the vault could not be opened right anyway.
        guard let custody = DeviceCustody(rawValue: custodyByte) else {
            throw .unsupported("this vault's device key is held by custodian \(custodyByte), which this library does not know; upgrade CredentialVault")
        }
        switch (source, kdf) {
        case (.passphrase, .argon2id13):
            guard KDFParameters.isInRange(opsLimit: ops, memLimitBytes: mem) else {
                throw .corrupted("KDF parameters out of range (ops \(ops), memory \(mem) bytes); refusing to run them")
            }
        case (.keyFile, .none), (.device, .none):
            guard ops == 0, mem == 0 else { throw .corrupted("KDF parameters set for a key that takes none") }
        default:
            throw .corrupted("KDF does not match the key source")
        }
        return VaultHeader(
            minor: minor, incompatibleFeatures: incompatible, compatibleFeatures: compatible, vaultID: id, keySource: source,
            kdf: kdf, opsLimit: ops, memLimitBytes: mem, salt: salt, wrappedKey: wrapped, generation: generation,
            recordCount: count, custody: custody, hasRollbackCounter: flags & rollbackCounterFlag != 0)
    }
}
