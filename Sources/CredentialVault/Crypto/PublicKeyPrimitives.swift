import CSodium
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Public-key primitives, libsodium's: X25519 sealed boxes (`crypto_box_seal`: anyone can seal
/// to a public key, only its holder opens) and Ed25519 signatures (`crypto_sign`). Key pairs
/// are made from a 32-byte seed, so a key pair is kept as one secret (a key file, a seed held
/// by a custodian) and derived when used.
extension Crypto {
    package static let boxPublicKeyBytes = Int(crypto_box_publickeybytes())
    package static let boxSealOverhead = Int(crypto_box_sealbytes())
    package static let signPublicKeyBytes = Int(crypto_sign_publickeybytes())
    package static let signatureBytes = Int(crypto_sign_bytes())

    /// The X25519 key pair of `seed` (32 bytes).
    package static func boxKeyPair(seed: SecureBytes) -> (publicKey: [UInt8], secretKey: SecureBytes) {
        keyPair(seed: seed, publicBytes: boxPublicKeyBytes, secretBytes: Int(crypto_box_secretkeybytes()), crypto_box_seed_keypair)
    }

    /// A key pair made from `seed` by libsodium's `make` (`crypto_*_seed_keypair`).
    private static func keyPair(
        seed: SecureBytes, publicBytes: Int, secretBytes: Int,
        _ make: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafePointer<UInt8>) -> Int32
    ) -> (publicKey: [UInt8], secretKey: SecureBytes) {
        Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: publicBytes)
        let secretKey = SecureBytes(count: secretBytes)
        secretKey.withUnsafeMutableBytes { sk in
            seed.withUnsafeBytes { s in
                _ = make(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self), s.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return (publicKey, secretKey)
    }

    /// Seals `plaintext` to `publicKey` (an ephemeral key pair's box: `boxSealOverhead` more
    /// bytes). Anyone can make one: it proves nothing about who sealed it.
    package static func sealBox(_ plaintext: UnsafeRawBufferPointer, to publicKey: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        precondition(publicKey.count == boxPublicKeyBytes)
        var out = [UInt8](repeating: 0, count: plaintext.count + boxSealOverhead)
        _ = crypto_box_seal(&out, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count), publicKey)
        return out
    }

    /// Opens a sealed box (of a non-empty plaintext) with the key pair it was sealed to; `nil`
    /// when it was not (or was changed).
    package static func openBox(_ sealed: UnsafeRawBufferPointer, publicKey: [UInt8], secretKey: SecureBytes) -> SecureBytes? {
        Sodium.ensureInitialized()
        guard sealed.count > boxSealOverhead, publicKey.count == boxPublicKeyBytes else { return nil }
        let plain = SecureBytes(count: sealed.count - boxSealOverhead)
        let rc = plain.withUnsafeMutableBytes { out in
            secretKey.withUnsafeBytes { sk in
                crypto_box_seal_open(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count), publicKey,
                    sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return rc == 0 ? plain : nil
    }

    /// The Ed25519 key pair of `seed` (32 bytes).
    package static func signKeyPair(seed: SecureBytes) -> (publicKey: [UInt8], secretKey: SecureBytes) {
        keyPair(seed: seed, publicBytes: signPublicKeyBytes, secretBytes: Int(crypto_sign_secretkeybytes()), crypto_sign_seed_keypair)
    }

    /// The detached Ed25519 signature of `message`.
    package static func sign(_ message: [UInt8], secretKey: SecureBytes) -> [UInt8] {
        Sodium.ensureInitialized()
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        secretKey.withUnsafeBytes { sk in
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    package static func verify(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        Sodium.ensureInitialized()
        guard signature.count == signatureBytes, publicKey.count == signPublicKeyBytes else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}
