import CSodium
import Foundation

/// libsodium initialisation and the small primitives the JOSE layer needs from it.
enum SodiumRuntime {
    /// `sodium_init` is idempotent and thread-safe; a Swift static is initialised once,
    /// lazily and atomically. When it fails (no random source) every verification fails
    /// closed and random generation traps (see `PKCE.generate`).
    static let isReady: Bool = sodium_init() >= 0

    /// SHA-256 of `bytes` (`crypto_hash_sha256`).
    static func sha256<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        digest(Array(bytes), size: crypto_hash_sha256_bytes()) { crypto_hash_sha256($0, $1, $2) }
    }

    /// SHA-512 of `bytes` (`crypto_hash_sha512`).
    static func sha512<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        digest(Array(bytes), size: crypto_hash_sha512_bytes()) { crypto_hash_sha512($0, $1, $2) }
    }

    private static func digest(
        _ input: [UInt8], size: Int, _ hash: (UnsafeMutablePointer<UInt8>, UnsafePointer<UInt8>, UInt64) -> Int32
    ) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: size)
        // A non-null pointer even for empty input; the length passed is the real one.
        let storage = input.isEmpty ? [UInt8(0)] : input
        storage.withUnsafeBufferPointer { inputBuffer in
            digest.withUnsafeMutableBufferPointer { output in
                guard let inputBase = inputBuffer.baseAddress, let outputBase = output.baseAddress else { return }
                _ = hash(outputBase, inputBase, UInt64(input.count))
            }
        }
        return digest
    }

    /// Whether `a` and `b` are equal, in time independent of where they differ and of their
    /// lengths: both are hashed with SHA-256 and the digests compared with `sodium_memcmp`.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let left = sha256(a)
        let right = sha256(b)
        return left.withUnsafeBytes { l in
            right.withUnsafeBytes { r in
                guard let lBase = l.baseAddress, let rBase = r.baseAddress else { return false }
                return sodium_memcmp(lBase, rBase, l.count) == 0
            }
        }
    }

    /// `count` bytes from libsodium's CSPRNG (`getrandom` on Linux).
    static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(isReady, "libsodium failed to initialise (no random source?)")
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            randombytes_buf(base, buffer.count)
        }
        return out
    }
}
