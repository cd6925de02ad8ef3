import CSodium
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

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
        let count = plaintext.count + Crypto.sealOverhead
        // sealRaw writes every byte (nonce, ciphertext, tag), so the box is allocated without
        // zeroing and handed to Data without a copy: `Data(count:)` zero-fills and its mutable
        // access checks uniqueness, which together cost about as much as sealing 32 bytes.
        let box = Self.allocate(count)
        plaintext.withUnsafeBytes { p in
            associatedData.withUnsafeBytes { ad in
                Crypto.sealRaw(p, key: key, associatedData: ad, into: UnsafeMutableRawBufferPointer(start: box, count: count))
            }
        }
        return Data(bytesNoCopy: box, count: count, deallocator: .free)
    }

    /// Opens a box made by `seal` with the same associated data; `tampered` when anything differs.
    public func open(_ box: Data, associatedData: Data = Data()) throws(CredentialVaultError) -> Data {
        guard box.count >= Crypto.sealOverhead else { throw .corrupted("a sealed box is at least 40 bytes") }
        let count = box.count - Crypto.sealOverhead
        // Decrypted straight into the buffer the returned Data adopts (see `seal`); wiped and
        // freed if the box does not authenticate.
        let plaintext = Self.allocate(max(count, 1))
        let ok = box.withUnsafeBytes { b in
            associatedData.withUnsafeBytes { ad in
                Crypto.openRaw(b, key: key, associatedData: ad, into: UnsafeMutableRawBufferPointer(start: plaintext, count: count))
            }
        }
        guard ok else {
            sodium_memzero(plaintext, max(count, 1))
            free(plaintext)
            throw .tampered
        }
        if count == 0 {
            free(plaintext)
            return Data()
        }
        return Data(bytesNoCopy: plaintext, count: count, deallocator: .free)
    }

    /// `count` uninitialised bytes from malloc (Data frees them with `.free`).
    private static func allocate(_ count: Int) -> UnsafeMutableRawPointer {
        guard let pointer = malloc(count) else { fatalError("out of memory allocating \(count) bytes") }
        return pointer
    }

    /// Redacted.
    public var description: String { "SealingKey(redacted)" }
}
