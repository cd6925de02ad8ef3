import CredentialVault

/// What the custodian derives from the caller's `binding` (a key derived from the host secret):
/// the authValues the TPM demands, so that another local user who reaches the TPM but cannot
/// read this user's host secret can neither unseal the device secret nor touch the counters.
/// Keyed BLAKE2b with fixed labels: one binding gives unrelated values for each purpose.
enum TPMBinding {
    /// Refuses a binding that cannot key BLAKE2b (16 to 64 bytes): a hash keyed with it would
    /// fail, and an authValue that does not depend on the binding would protect nothing.
    static func check(_ binding: SecureBytes) throws(CredentialVaultError) {
        guard (16...64).contains(binding.count) else {
            throw .invalidArgument("a custodian binding has 16 to 64 bytes, not \(binding.count)")
        }
    }

    /// The sealed device secret's authValue (32 bytes).
    static func objectAuth(_ binding: SecureBytes) -> SecureBytes {
        let label = Array("CredentialVault TPM device secret auth v1".utf8)
        return label.withUnsafeBytes { Crypto.keyedHashKey(key: binding, [$0]) }
    }

    /// The authValue of the vault `vaultID`'s counter (32 bytes).
    static func counterAuth(_ binding: SecureBytes, vaultID: [UInt8]) -> SecureBytes {
        let label = Array("CredentialVault TPM counter auth v1\u{0}".utf8)
        return label.withUnsafeBytes { l in vaultID.withUnsafeBytes { v in Crypto.keyedHashKey(key: binding, [l, v]) } }
    }

    /// The tag a counter of the vault `vaultID` carries in its public area (as its authPolicy,
    /// 32 bytes; not secret: the vault id is in the file's clear header), so that whoever opens
    /// a copy of the vault from before its move to TPM custody finds the counter from the id
    /// alone (`TPMCustodian.anchoredCounter`), without the host secret the authValue needs.
    /// Inert as a policy: the counter's attributes allow no policy authorization for reading or
    /// writing, and no policy session can be made to reach a digest chosen this way.
    static func anchorTag(vaultID: [UInt8]) -> [UInt8] {
        let label = Array("CredentialVault TPM counter anchor v1\u{0}".utf8)
        return label.withUnsafeBytes { l in vaultID.withUnsafeBytes { v in Crypto.keyedHash(key: nil, [l, v]) } }
    }

    /// The owner range of NV indices (TCG handle registry: 0x01000000...0x013FFFFF).
    static let ownerRange: ClosedRange<UInt32> = 0x0100_0000...0x013F_FFFF

    /// How many indices `counterIndices` proposes before giving up.
    static let probes = 16

    /// Where the vault `vaultID`'s counter may go: an index in the owner range chosen by a hash
    /// of the id (not secret: an NV index is public), then the next ones (wrapping in the
    /// range) when it is taken.
    static func counterIndices(vaultID: [UInt8]) -> [UInt32] {
        let label = Array("CredentialVault TPM counter index v1\u{0}".utf8)
        let digest = label.withUnsafeBytes { l in vaultID.withUnsafeBytes { v in Crypto.keyedHash(key: nil, [l, v]) } }
        let seed = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let width = ownerRange.upperBound - ownerRange.lowerBound + 1
        return (0..<UInt32(probes)).map { ownerRange.lowerBound + (seed &+ $0) % width }
    }
}
