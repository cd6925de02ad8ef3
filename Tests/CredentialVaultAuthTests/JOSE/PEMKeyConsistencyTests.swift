import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A PEM private key is checked like a private JWK: OpenSSL reads an `EC PRIVATE KEY` whose
/// public point is another key's, or whose scalar is 0 or not below the group order, without
/// complaint (only `openssl pkey -check` notices). Such a key would publish (and be
/// identified by the thumbprint of) a public key it does not sign for, or sign with a value no
/// P-256 private key may have.
@Suite("PEM private keys: halves that agree, scalars in range")
struct PEMKeyConsistencyTests {
    /// The order n of P-256.
    static let order: [UInt8] = hex("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        precondition(content.count < 0x80)
        return [tag, UInt8(content.count)] + content
    }

    /// A SEC1 `EC PRIVATE KEY` (RFC 5915) for P-256 with scalar `d` and, when given, the
    /// uncompressed public point `publicPoint`.
    static func sec1PEM(d: [UInt8], publicPoint: [UInt8]?) -> SecureBytes {
        let curve: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        var body = tlv(0x02, [0x01]) + tlv(0x04, d) + tlv(0xA0, curve)
        if let publicPoint { body += tlv(0xA1, tlv(0x03, [0x00] + publicPoint)) }
        let der = tlv(0x30, body)
        let text = "-----BEGIN EC PRIVATE KEY-----\n"
            + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END EC PRIVATE KEY-----\n"
        return SecureBytes(copying: Array(text.utf8))
    }

    /// The uncompressed public point of a fresh P-256 key.
    static func anotherPublicPoint() throws -> [UInt8] {
        let other = try JWSSigningKey.generate(.es256)
        guard let x = other.publicJWK["x"]?.stringValue, let y = other.publicJWK["y"]?.stringValue else {
            throw JOSEError.invalidKey("no public point")
        }
        return [0x04] + Array(try Base64URL.decode(x)) + Array(try Base64URL.decode(y))
    }

    @Test("a well-formed SEC1 key built here is accepted (the builder is right)")
    func wellFormed() throws {
        var d = [UInt8](repeating: 0, count: 32)
        d[31] = 7
        #expect(try JWSSigningKey(privateKey: Self.sec1PEM(d: d, publicPoint: nil)).algorithm == .es256)
    }

    @Test("an EC PEM key whose public point belongs to another key is refused")
    func mismatchedPublicPoint() throws {
        var d = [UInt8](repeating: 0, count: 32)
        d[31] = 7
        let pem = Self.sec1PEM(d: d, publicPoint: try Self.anotherPublicPoint())
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: pem) }
    }

    @Test(
        "an EC PEM key whose private scalar is 0, n, n + 1 or 2^256 - 1 is refused",
        arguments: ["zero", "n", "n+1", "max"])
    func scalarOutOfRange(which: String) throws {
        var d: [UInt8]
        switch which {
        case "zero": d = [UInt8](repeating: 0, count: 32)
        case "n": d = Self.order
        case "n+1":
            d = Self.order
            d[31] += 1  // n ends in 0x51: no carry
        default: d = [UInt8](repeating: 0xFF, count: 32)
        }
        let pem = Self.sec1PEM(d: d, publicPoint: nil)
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: pem) }
    }
}
