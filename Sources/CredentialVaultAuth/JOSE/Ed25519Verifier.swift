import CSodium
import Foundation

/// EdDSA with Ed25519 (RFC 8037) through libsodium.
///
/// libsodium's `crypto_sign_verify_detached` rejects non-canonical `S` values and
/// small-order public keys and R points, which rules out the usual Ed25519 malleability and
/// "signature valid for every message" keys.
enum Ed25519Verifier {
    /// Whether `key` is a canonical encoding of a valid, non-small-order Ed25519 point.
    static func isValidPublicKey(_ key: Data) -> Bool {
        guard key.count == Int(crypto_sign_publickeybytes()), SodiumRuntime.isReady else { return false }
        let bytes = Array(key)
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return crypto_core_ed25519_is_valid_point(base) == 1
        }
    }

    /// Verifies the 64-byte `signature` over `message` with the 32-byte `publicKey`.
    static func verify(publicKey: Data, signature: Data, message: Data) -> Bool {
        guard SodiumRuntime.isReady,
            publicKey.count == Int(crypto_sign_publickeybytes()),
            signature.count == Int(crypto_sign_bytes())
        else { return false }
        let key = Array(publicKey)
        let sig = Array(signature)
        // libsodium's parameters are non-null: give it a one-byte buffer for an empty message.
        let messageBytes = message.isEmpty ? [UInt8(0)] : Array(message)
        let messageLength = UInt64(message.count)
        return key.withUnsafeBufferPointer { keyBuffer in
            sig.withUnsafeBufferPointer { sigBuffer in
                messageBytes.withUnsafeBufferPointer { msgBuffer in
                    guard let keyBase = keyBuffer.baseAddress, let sigBase = sigBuffer.baseAddress,
                        let msgBase = msgBuffer.baseAddress
                    else { return false }
                    return crypto_sign_verify_detached(sigBase, msgBase, messageLength, keyBase) == 0
                }
            }
        }
    }
}
