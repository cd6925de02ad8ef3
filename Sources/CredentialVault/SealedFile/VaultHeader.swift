/// The fixed-size header of a sealed-file vault (the same in formats 1.x to 6.x); see
/// docs/FORMAT.md.
///
///     offset size field
///          0    8 magic "CRDVAULT"
///          8    2 format major (1 to 5)   little-endian, like every integer here
///         10    2 format minor (0)
///         12   16 vault id (random)
///         28    1 key source (1 passphrase, 2 key file, 3 device key)
///         29    1 KDF (0 none, 1 Argon2id v1.3)
///         30    1 custody (6.0; before: reserved, zero): 0 host-secret file, 1 login keyring, 2 TPM
///         31    1 flags (6.0; before: reserved, zero): 1 rollback counter
///         32    8 KDF ops limit
///         40    8 KDF memory limit in bytes
///         48   16 salt
///         64   72 wrapped data key: nonce(24) ciphertext(32) tag(16); associated data = bytes 0..<64
///        136    8 generation (incremented by every write; from format 3 on, of the snapshot)
///        144    4 record count (from format 3 on, of the snapshot)
///
/// Bytes 0..<64 are authenticated by the data-key wrapping, and the whole header by the file
/// MAC (formats 1 and 2) or the snapshot MAC (formats 3 to 5), so no field can be changed
/// undetected.
struct VaultHeader: Equatable {
    static let magic: [UInt8] = Array("CRDVAULT".utf8)
    /// New vaults are written in format 5 (format 4 whose records carry created and modified
    /// times; 4 was 3 with padded records and slot-bound commit records); format 1 to 4 vaults
    /// are read and written in their own format until their key is changed or rotated (the
    /// re-wrap binds the new major). Why majors and not 3.1 or 4.1: an older reader must say
    /// "newer format, upgrade", not "tampered" or "corrupted", for a file it cannot read.
    ///
    /// Format 6 is 5 with the custody of the device key and a rollback counter recorded
    /// (`custody`, `hasRollbackCounter`); it is written only for vaults that use either, so that
    /// every other vault stays readable by older readers. Why a major: a 5.0 reader would open a
    /// rollback-protected vault without checking its counter.
    static let currentMajor: UInt16 = 5
    static let custodyMajor: UInt16 = 6
    static let supportedMajors: ClosedRange<UInt16> = 1...6
    static let currentMinor: UInt16 = 0
    static let keyParametersSize = 64
    static let wrappedKeySize = Crypto.keyBytes + Crypto.sealOverhead
    static let size = keyParametersSize + wrappedKeySize + 8 + 4
    static let idSize = 16

    enum KDF: UInt8 {
        case none = 0
        case argon2id13 = 1
    }

    var major: UInt16 = currentMajor
    var minor: UInt16 = currentMinor
    var vaultID: [UInt8]
    var keySource: KeySource
    var kdf: KDF
    var opsLimit: UInt64
    var memLimitBytes: UInt64
    var salt: [UInt8]
    var wrappedKey: [UInt8]
    var generation: UInt64
    var recordCount: UInt32
    /// Who keeps the device secret (format 6; `.file` before).
    var custody: DeviceCustody = .file
    /// Whether the commit records carry a rollback counter that the custodian keeps too (format 6).
    var hasRollbackCounter = false

    /// The major version a vault with this custody and counter is written in.
    static func major(custody: DeviceCustody, rollbackCounter: Bool) -> UInt16 {
        custody == .file && !rollbackCounter ? currentMajor : custodyMajor
    }

    /// The first 64 bytes: what the wrapped data key is bound to.
    func keyParameterBytes() -> [UInt8] {
        var w = ByteWriter(capacity: Self.keyParametersSize)
        w.raw(Self.magic)
        w.u16(major)
        w.u16(minor)
        w.raw(vaultID)
        w.u8(keySource.rawValue)
        w.u8(kdf.rawValue)
        w.u8(custody.rawValue)
        w.u8(hasRollbackCounter ? 1 : 0)
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
    /// `unsupported` (a future major version). Minor versions are forward compatible by promise.
    static func decode(_ reader: inout ByteReader) throws(CredentialVaultError) -> VaultHeader {
        guard let magic = reader.bytes(8) else { throw .corrupted("file too short to be a vault") }
        guard magic == Self.magic else { throw .corrupted("not a CredentialVault file") }
        guard let major = reader.u16(), let minor = reader.u16() else { throw .corrupted("truncated header") }
        guard supportedMajors.contains(major) else {
            throw .unsupported("vault format \(major).\(minor) is newer than this library (reads 1.x to \(supportedMajors.upperBound).x); upgrade CredentialVault")
        }
        guard let id = reader.bytes(idSize), let sourceByte = reader.u8(), let kdfByte = reader.u8(),
            let custodyByte = reader.u8(), let flags = reader.u8(), let ops = reader.u64(), let mem = reader.u64(),
            let salt = reader.bytes(Crypto.saltBytes), let wrapped = reader.bytes(wrappedKeySize),
            let generation = reader.u64(), let count = reader.u32()
        else { throw .corrupted("truncated header") }
        guard let source = KeySource(rawValue: sourceByte) else { throw .corrupted("unknown key source \(sourceByte)") }
        guard let kdf = KDF(rawValue: kdfByte) else { throw .corrupted("unknown KDF \(kdfByte)") }
        // Before 6.0 both bytes are reserved; in 6.0 a custody this library does not know is a
        // newer minor's (`unsupported`), never read as a weaker one.
        if major < custodyMajor {
            guard custodyByte == 0, flags == 0 else { throw .corrupted("reserved bits set") }
        } else {
            guard flags & ~1 == 0 else { throw .corrupted("unknown header flags \(flags)") }
        }
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
            major: major, minor: minor, vaultID: id, keySource: source, kdf: kdf, opsLimit: ops,
            memLimitBytes: mem, salt: salt, wrappedKey: wrapped, generation: generation, recordCount: count, custody: custody,
            hasRollbackCounter: flags & 1 != 0)
    }
}
