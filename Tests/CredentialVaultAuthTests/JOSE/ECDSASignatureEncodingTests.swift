import Foundation
import Testing

@testable import CredentialVaultAuth

@Suite("ECDSA signature: DER to JOSE r || s")
struct ECDSASignatureEncodingTests {
    /// DER `SEQUENCE { INTEGER r, INTEGER s }` from the integers' content bytes (as given).
    static func der(r: [UInt8], s: [UInt8]) -> [UInt8] {
        let body = [0x02, UInt8(r.count)] + r + [0x02, UInt8(s.count)] + s
        return [0x30, UInt8(body.count)] + body
    }

    @Test("full-length r and s are copied as they are")
    func fullLength() throws {
        let r = [UInt8](repeating: 0x11, count: 32)
        let s = [UInt8](repeating: 0x22, count: 32)
        #expect(try ECDSASignatureEncoding.rawSignature(fromDER: Self.der(r: r, s: s)) == r + s)
    }

    @Test("the zero byte DER puts before an integer whose top bit is set is dropped")
    func leadingZeroForTopBit() throws {
        let r = [UInt8](repeating: 0xF0, count: 32)
        let s = [UInt8](repeating: 0x80, count: 32)
        #expect(try ECDSASignatureEncoding.rawSignature(fromDER: Self.der(r: [0] + r, s: [0] + s)) == r + s)
    }

    @Test("a short r or s (leading zero bytes dropped by DER) is left-padded to 32 bytes")
    func shortIntegersArePadded() throws {
        let r: [UInt8] = [0x01] + [UInt8](repeating: 0x33, count: 29)  // 30 bytes
        let s: [UInt8] = [0x7F]
        let raw = try ECDSASignatureEncoding.rawSignature(fromDER: Self.der(r: r, s: s))
        #expect(raw.count == 64)
        #expect(raw[0..<32] == ArraySlice([0, 0] + r))
        #expect(raw[32..<64] == ArraySlice([UInt8](repeating: 0, count: 31) + s))
    }

    @Test("the conversion agrees with OpenSSL's own DER for random signatures, including short ones")
    func agreesWithOpenSSL() throws {
        for round in 0..<200 {
            var raw = (0..<64).map { _ in UInt8.random(in: .min ... .max) }
            // Force leading zero bytes and top bits set in turn.
            if round % 4 == 0 { raw[0] = 0; raw[1] = 0 }
            if round % 4 == 1 { raw[32] = 0 }
            if round % 4 == 2 { raw[0] |= 0x80; raw[32] |= 0x80 }
            raw[31] |= 1; raw[63] |= 1  // never zero
            let der = try #require(ECDSAP256Verifier.derSignature(raw: raw))
            #expect(try ECDSASignatureEncoding.rawSignature(fromDER: der) == raw)
            #expect(try OpenSSLTestSupport.rawECDSA(der: der) == raw)
        }
    }

    @Test(
        "malformed DER is refused with a typed error, never a crash",
        arguments: [
            [UInt8](),  // empty
            [0x30],  // no length
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01],  // truncated content
            [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],  // a SET, not a SEQUENCE
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00],  // trailing byte
            [0x30, 0x03, 0x02, 0x01, 0x01],  // one integer only
            [0x30, 0x09, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],  // three integers
            [0x30, 0x06, 0x04, 0x01, 0x01, 0x02, 0x01, 0x01],  // an OCTET STRING for r
            [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01],  // negative r
            [0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01],  // redundant leading zero
            [0x30, 0x05, 0x02, 0x00, 0x02, 0x01, 0x01],  // empty integer
            [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x01],  // r = 0
            [0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],  // long-form length for a short one
            [0x30, 0x85, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // absurd length
            [0x30, 0x80, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00, 0x00],  // indefinite length (BER)
        ] as [[UInt8]])
    func malformed(der: [UInt8]) {
        #expect(throws: JOSEError.self) { try ECDSASignatureEncoding.rawSignature(fromDER: der) }
    }

    @Test("an integer longer than the curve (33 significant bytes) is refused")
    func overlongInteger() {
        let r: [UInt8] = [0x01] + [UInt8](repeating: 0x44, count: 32)
        #expect(throws: JOSEError.self) {
            try ECDSASignatureEncoding.rawSignature(fromDER: Self.der(r: r, s: [0x01]))
        }
    }
}
