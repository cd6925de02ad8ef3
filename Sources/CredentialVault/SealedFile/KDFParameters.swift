import CSodium

/// Argon2id cost parameters for passphrase unlock. Derived once per unlock, never per item.
public struct KDFParameters: Sendable, Hashable, CustomStringConvertible {
    /// Passes over memory (libsodium's `opslimit`).
    public let opsLimit: UInt64
    /// Memory in bytes (libsodium's `memlimit`).
    public let memLimitBytes: UInt64

    /// Bounds accepted when reading a vault and when creating one: no more work than the
    /// strongest preset the project writes (`sensitive`: 4 passes over 1 GiB), so at most
    /// 1 GiB and passes × memory at most `sensitive`'s. The header's KDF fields are
    /// authenticated only through the data-key wrap, which needs the derived key, so a keyless
    /// edit raising them is noticed only after the derivation has run: the bound is what keeps
    /// such an edit from costing more than one `sensitive` unlock (about 3 s here). Bounding the
    /// work rather than each field keeps vaults made with more passes over less memory (ops 16
    /// at 256 MiB, accepted before) opening.
    public static let maxOpsLimit: UInt64 = 16
    /// The largest memory cost accepted (1 GiB, libsodium's "sensitive" preset).
    public static let maxMemLimitBytes: UInt64 = 1 << 30
    /// The most work accepted, passes × bytes: `sensitive`'s.
    public static let maxWork: UInt64 = UInt64(crypto_pwhash_argon2id_opslimit_sensitive()) * UInt64(crypto_pwhash_argon2id_memlimit_sensitive())
    /// The smallest values libsodium's Argon2id accepts.
    public static let minOpsLimit: UInt64 = 1
    /// The smallest memory cost libsodium accepts (8 KiB).
    public static let minMemLimitBytes: UInt64 = 8192

    /// Checked parameters; throws `invalidArgument` outside the accepted bounds.
    public init(opsLimit: UInt64, memLimitBytes: UInt64) throws(CredentialVaultError) {
        guard Self.isInRange(opsLimit: opsLimit, memLimitBytes: memLimitBytes) else {
            throw .invalidArgument(
                "Argon2id parameters out of range (ops 1...\(Self.maxOpsLimit), memory 8 KiB...1 GiB in whole KiB, ops × memory at most the sensitive preset's)")
        }
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
    }

    private init(unchecked opsLimit: UInt64, _ memLimitBytes: UInt64) {
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
    }

    static func isInRange(opsLimit: UInt64, memLimitBytes: UInt64) -> Bool {
        (minOpsLimit...maxOpsLimit).contains(opsLimit) && (minMemLimitBytes...maxMemLimitBytes).contains(memLimitBytes)
            && memLimitBytes % 1024 == 0 && opsLimit * memLimitBytes <= maxWork
    }

    /// libsodium's interactive preset: 2 passes, 64 MiB (~60 ms here).
    public static let interactive = KDFParameters(
        unchecked: UInt64(crypto_pwhash_argon2id_opslimit_interactive()), UInt64(crypto_pwhash_argon2id_memlimit_interactive()))
    /// libsodium's moderate preset: 3 passes, 256 MiB (~390 ms here). The default for new vaults.
    public static let moderate = KDFParameters(
        unchecked: UInt64(crypto_pwhash_argon2id_opslimit_moderate()), UInt64(crypto_pwhash_argon2id_memlimit_moderate()))
    /// libsodium's sensitive preset: 4 passes, 1 GiB.
    public static let sensitive = KDFParameters(
        unchecked: UInt64(crypto_pwhash_argon2id_opslimit_sensitive()), UInt64(crypto_pwhash_argon2id_memlimit_sensitive()))
    /// The cheapest parameters libsodium accepts. Only for tests: offers no brute-force resistance.
    public static let insecureTestingOnly = KDFParameters(unchecked: 1, 8192)

    /// For example `Argon2id(ops 3, 256 MiB)`.
    public var description: String {
        memLimitBytes >= 1 << 20
            ? "Argon2id(ops \(opsLimit), \(memLimitBytes >> 20) MiB)" : "Argon2id(ops \(opsLimit), \(memLimitBytes >> 10) KiB)"
    }
}
