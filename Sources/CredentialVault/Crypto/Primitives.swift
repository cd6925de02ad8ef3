import CSodium
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// How many password derivations this process has run: the promise "one KDF per unlock"
/// is checked against it in tests and benchmarks.
public final class PasswordDerivationCounter: Sendable {
    private let count = Atomic<Int>(0)
    @TaskLocal static var current: PasswordDerivationCounter?

    /// A counter that sees nothing until used with `counting(_:)`.
    public init() {}

    /// The number of Argon2id runs counted so far.
    public var value: Int { count.load(ordering: .relaxed) }

    /// Runs `body`, counting the Argon2id runs made by this task (not other tasks or tests).
    public func counting<R>(_ body: () throws -> R) rethrows -> R {
        try Self.$current.withValue(self) { try body() }
    }

    static func record() { current?.count.add(1, ordering: .relaxed) }
}

extension Data: ContiguousBytesLike {
    /// Calls `body` with the bytes.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

/// The only cryptographic primitives the vault uses, all from libsodium:
/// - XChaCha20-Poly1305 (IETF): 192-bit nonces are safe to pick at random for every message,
///   so no nonce counter has to survive crashes or be shared between processes;
/// - Argon2id for passphrases (memory-hard, the recommendation of RFC 9106);
/// - BLAKE2b (`crypto_generichash`) as keyed hash / MAC, and `crypto_kdf` (BLAKE2b-based) to
///   derive independent subkeys, so one key is never used for two purposes.
package enum Crypto {
    package static let keyBytes = 32
    package static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    package static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_abytes())
    /// Nonce plus tag: what sealing adds to a plaintext.
    package static let sealOverhead = nonceBytes + tagBytes
    package static let saltBytes = Int(crypto_pwhash_argon2id_saltbytes())
    package static let macBytes = 32

    /// Random bytes from libsodium's CSPRNG (getrandom).
    package static func randomBytes(_ count: Int) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        if count > 0 { out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) } }
        return out
    }

    /// Seals `plaintext` into `out` (exactly `plaintext.count + sealOverhead` bytes) as
    /// `nonce || ciphertext || tag`, with a fresh random nonce.
    package static func sealRaw(
        _ plaintext: UnsafeRawBufferPointer, key: SecureBytes, associatedData: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) {
        Sodium.ensureInitialized()
        precondition(out.count == plaintext.count + sealOverhead)
        let nonce = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        randombytes_buf(nonce, nonceBytes)
        key.withUnsafeBytes { k in
            var written: UInt64 = 0
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                nonce.advanced(by: nonceBytes), &written,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nil, nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Opens `box` (`nonce || ciphertext || tag`) into `out` (exactly `box.count - sealOverhead`
    /// bytes). Returns `false` when authentication fails (then `out` holds nothing useful).
    package static func openRaw(
        _ box: UnsafeRawBufferPointer, key: SecureBytes, associatedData: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        Sodium.ensureInitialized()
        guard box.count >= sealOverhead, out.count == box.count - sealOverhead else { return false }
        let nonce = box.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // libsodium wants a non-null output pointer even for an empty plaintext.
        var scratch: UInt8 = 0
        return withUnsafeMutablePointer(to: &scratch) { fallback in
            key.withUnsafeBytes { k in
                var written: UInt64 = 0
                return crypto_aead_xchacha20poly1305_ietf_decrypt(
                    out.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback, &written, nil,
                    nonce.advanced(by: nonceBytes), UInt64(box.count - nonceBytes),
                    associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                    nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
            }
        }
    }

    /// Seals `plaintext` as `nonce || ciphertext || tag`, appended to `output`.
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SecureBytes, associatedData: [UInt8], into output: inout [UInt8]
    ) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: plaintext.count + sealOverhead))
        output.withUnsafeMutableBytes { out in
            associatedData.withUnsafeBytes { ad in
                sealRaw(plaintext, key: key, associatedData: ad, into: UnsafeMutableRawBufferPointer(rebasing: out[start...]))
            }
        }
    }

    /// Seals `plaintext`, returning `nonce || ciphertext || tag`.
    package static func seal(_ plaintext: [UInt8], key: SecureBytes, associatedData: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        plaintext.withUnsafeBytes { seal($0, key: key, associatedData: associatedData, into: &out) }
        return out
    }

    /// Opens `nonce || ciphertext || tag` into `output` (resized to the plaintext length).
    /// Returns `false` when authentication fails; `output` then holds only zeros.
    package static func open(
        _ box: UnsafeRawBufferPointer, key: SecureBytes, associatedData: [UInt8], into output: inout [UInt8]
    ) -> Bool {
        guard box.count >= sealOverhead else { return false }
        output = [UInt8](repeating: 0, count: box.count - sealOverhead)
        let ok = output.withUnsafeMutableBytes { out in
            associatedData.withUnsafeBytes { ad in openRaw(box, key: key, associatedData: ad, into: out) }
        }
        if !ok { wipe(&output) }
        return ok
    }

    /// Opens `nonce || ciphertext || tag`; `nil` when authentication fails.
    package static func open(_ box: [UInt8], key: SecureBytes, associatedData: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        let ok = box.withUnsafeBytes { open($0, key: key, associatedData: associatedData, into: &out) }
        return ok ? out : nil
    }

    /// Argon2id13 over `passphrase` into a 32-byte key in guarded memory. `nil` when libsodium
    /// refuses (out of memory); the parameters are range-checked by the caller first.
    package static func argon2id(passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimitBytes: Int) -> SecureBytes? {
        Sodium.ensureInitialized()
        PasswordDerivationCounter.record()
        let key = SecureBytes(count: keyBytes)
        let rc = key.withUnsafeMutableBytes { out in
            passphrase.withUnsafeBytes { pw in
                salt.withUnsafeBytes { s in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(keyBytes),
                        pw.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(pw.count),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        opsLimit, memLimitBytes, crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        return rc == 0 ? key : nil
    }

    /// Keyed BLAKE2b-256 of the concatenated `parts` (the key may be `nil` for a plain hash).
    package static func keyedHash(key: SecureBytes?, _ parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        Sodium.ensureInitialized()
        // crypto_generichash_state is 64-byte aligned and does not import: allocate it raw.
        let stateSize = crypto_generichash_statebytes()
        let raw = UnsafeMutableRawPointer.allocate(byteCount: stateSize, alignment: 64)
        defer {
            sodium_memzero(raw, stateSize)
            raw.deallocate()
        }
        let state = OpaquePointer(raw)
        var out = [UInt8](repeating: 0, count: macBytes)
        if let key {
            key.withUnsafeBytes { k in
                _ = crypto_generichash_init(state, k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count, macBytes)
            }
        } else {
            _ = crypto_generichash_init(state, nil, 0, macBytes)
        }
        for part in parts where part.count > 0 {
            _ = crypto_generichash_update(state, part.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(part.count))
        }
        out.withUnsafeMutableBytes { _ = crypto_generichash_final(state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), macBytes) }
        return out
    }

    /// Keyed BLAKE2b-256 into guarded memory (for deriving keys from secrets).
    package static func keyedHashKey(key: SecureBytes?, _ parts: [UnsafeRawBufferPointer]) -> SecureBytes {
        var digest = keyedHash(key: key, parts)
        defer { wipe(&digest) }
        return SecureBytes(copying: digest)
    }

    /// A 32-byte subkey of `master` for the purpose named by the 8-character `context`.
    package static func subkey(of master: SecureBytes, id: UInt64, context: StaticString) -> SecureBytes {
        precondition(context.utf8CodeUnitCount == 8, "crypto_kdf contexts are 8 bytes")
        Sodium.ensureInitialized()
        let sub = SecureBytes(count: keyBytes)
        sub.withUnsafeMutableBytes { out in
            master.withUnsafeBytes { m in
                context.withUTF8Buffer { ctx in
                    ctx.withMemoryRebound(to: CChar.self) { c in
                        _ = crypto_kdf_derive_from_key(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes, id, c.baseAddress!,
                            m.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return sub
    }
}
