import COpenSSL
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The DER-to-`r || s` converter against OpenSSL's own parser on mutated signatures: whatever
/// the bytes, it accepts exactly the strict DER OpenSSL reads and writes back unchanged (with
/// positive integers that fit the curve), gives OpenSSL's numbers, and never traps.
@Suite("ECDSA signature: mutated DER, judged by OpenSSL")
struct ECDSASignatureMutationTests {
    /// OpenSSL's reading of `der` as strict DER: `r || s` when d2i reads all of it, i2d writes
    /// the same bytes back, and r and s are positive and at most 32 bytes; otherwise nil.
    static func openSSLStrict(_ der: [UInt8]) -> [UInt8]? {
        var consumed = 0
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let parsed = d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            if let cursor { consumed = cursor - base }
            return parsed
        }
        defer { ERR_clear_error() }
        guard let signature else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard consumed == der.count else { return nil }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length == Int32(der.count) else { return nil }
        var again = [UInt8](repeating: 0, count: Int(length))
        _ = again.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        guard again == der else { return nil }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        guard let r, let s, BN_is_negative(r) == 0, BN_is_negative(s) == 0, BN_is_zero(r) == 0, BN_is_zero(s) == 0,
            BN_num_bits(r) <= 256, BN_num_bits(s) <= 256
        else { return nil }
        var out = [UInt8](repeating: 0, count: 64)
        let okR = out.withUnsafeMutableBufferPointer { BN_bn2binpad(r, $0.baseAddress, 32) == 32 }
        let okS = out.withUnsafeMutableBufferPointer { BN_bn2binpad(s, $0.baseAddress! + 32, 32) == 32 }
        return okR && okS ? out : nil
    }

    /// A real DER signature of a random message by `key`.
    static func signature(_ key: JWSSigningKey) throws -> [UInt8] {
        let raw = try key.sign(Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }))
        return try #require(ECDSAP256Verifier.derSignature(raw: Array(raw)))
    }

    @Test("mutated DER: accepted exactly when OpenSSL reads it as strict DER, with OpenSSL's r and s")
    func mutations() throws {
        let key = try JWSSigningKey.generate(.es256)
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for round in 0..<4000 {
            var der = try Self.signature(key)
            // One to three mutations: flip, insert, delete, truncate, or change a length byte.
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                guard !der.isEmpty else { break }
                let at = Int.random(in: 0..<der.count, using: &generator)
                switch (round + Int.random(in: 0..<6, using: &generator)) % 6 {
                case 0: der[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                case 1: der.insert(UInt8.random(in: .min ... .max, using: &generator), at: at)
                case 2: der.remove(at: at)
                case 3: der = Array(der[..<at])
                case 4: der[at] = [0x00, 0x7F, 0x80, 0x81, 0x82, 0xFF][Int.random(in: 0..<6, using: &generator)]
                default: der.insert(0x00, at: min(at, der.count))
                }
            }
            let ours = try? ECDSASignatureEncoding.rawSignature(fromDER: der)
            let theirs = Self.openSSLStrict(der)
            #expect(ours == theirs, "\(der.map { String(format: "%02x", $0) }.joined())")
            if ours != nil { accepted += 1 }
        }
        // Some mutations keep the DER valid (a flipped bit inside r or s): both sides were exercised.
        #expect(accepted > 0)
    }

    @Test("unmutated signatures: the converter and OpenSSL agree, over many signatures")
    func unmutated() throws {
        let key = try JWSSigningKey.generate(.es256)
        for _ in 0..<2000 {
            let der = try Self.signature(key)
            #expect(try ECDSASignatureEncoding.rawSignature(fromDER: der) == Self.openSSLStrict(der))
        }
    }
}
