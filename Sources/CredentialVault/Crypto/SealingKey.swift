import Foundation

/// A 256-bit XChaCha20-Poly1305 key in guarded memory: the library's public seal/open, the
/// same primitive the vault seals its records with.
///
/// `seal` returns `nonce (24) || ciphertext || tag (16)` with a fresh random nonce (192-bit
/// nonces are safe to draw at random, so no counter has to be kept). `open` authenticates
/// the box and the associated data before returning anything.
public struct SealingKey: Sendable, CustomStringConvertible {
    private let key: SecureBytes

    /// A fresh random key.
    public static func random() -> SealingKey { SealingKey(key: SecureBytes.random(count: Crypto.keyBytes)) }

    /// Uses 32 bytes of existing key material (copied); throws `invalidArgument` for another size.
    public init(copying material: SecureBytes) throws(CredentialVaultError) {
        guard material.count == Crypto.keyBytes else { throw .invalidArgument("a sealing key is 32 bytes") }
        key = material.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    private init(key: SecureBytes) { self.key = key }

    /// How many bytes `seal` adds to a plaintext (nonce and tag): 40.
    public static let overhead = Crypto.sealOverhead

    /// Seals `plaintext`, binding `associatedData` (authenticated, not encrypted).
    public func seal(_ plaintext: Data, associatedData: Data = Data()) -> Data {
        var box = Data(count: plaintext.count + Crypto.sealOverhead)
        box.withUnsafeMutableBytes { out in
            plaintext.withUnsafeBytes { p in
                associatedData.withUnsafeBytes { ad in Crypto.sealRaw(p, key: key, associatedData: ad, into: out) }
            }
        }
        return box
    }

    /// Opens a box made by `seal` with the same associated data; `tampered` when anything differs.
    public func open(_ box: Data, associatedData: Data = Data()) throws(CredentialVaultError) -> Data {
        guard box.count >= Crypto.sealOverhead else { throw .corrupted("a sealed box is at least 40 bytes") }
        var plaintext = Data(count: box.count - Crypto.sealOverhead)
        let ok = plaintext.withUnsafeMutableBytes { out in
            box.withUnsafeBytes { b in
                associatedData.withUnsafeBytes { ad in Crypto.openRaw(b, key: key, associatedData: ad, into: out) }
            }
        }
        guard ok else {
            plaintext.resetBytes(in: 0..<plaintext.count)
            throw .tampered
        }
        return plaintext
    }

    /// Redacted.
    public var description: String { "SealingKey(redacted)" }
}
