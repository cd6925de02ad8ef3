import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// PEM private keys are decoded by this module (PEMBlock, DERReader, PrivateKeyDER), not by
/// OpenSSL: every form `openssl` writes gives the same key as its PKCS#8 form, and hostile
/// bytes (truncated, corrupted, oversized, padded) are refused with `JOSEError`, never a crash.
@Suite struct PrivateKeyDERTests {
    private static func pem(_ file: URL) throws -> SecureBytes { SecureBytes(copying: Array(try Data(contentsOf: file))) }

    private static func thumbprint(_ bytes: SecureBytes) throws -> String { try JWSSigningKey(privateKey: bytes).thumbprint }

    /// The DER of the first PEM block of `file`, as `openssl` wrote it.
    private static func der(_ file: URL) throws -> [UInt8] {
        let text = try String(contentsOf: file, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Array(try #require(Data(base64Encoded: body)))
    }

    private static func wrap(_ der: [UInt8], label: String) -> SecureBytes {
        let text = "-----BEGIN \(label)-----\n" + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END \(label)-----\n"
        return SecureBytes(copying: Array(text.utf8))
    }

    @Test("an RSA PRIVATE KEY (PKCS#1) and a SEC1 key without its public point are the keys of their PKCS#8 forms")
    func traditionalForms() throws {
        let directory = TempDirectory()
        let rsa = try IndependentJOSE.openSSLKey("RSA", in: directory, "rsa.pem")
        let pkcs1 = directory.path("rsa1.pem")
        try IndependentJOSE.run("/usr/bin/openssl", ["rsa", "-traditional", "-in", rsa.path, "-out", pkcs1.path])
        #expect(try String(contentsOf: pkcs1, encoding: .utf8).hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        #expect(try Self.thumbprint(Self.pem(pkcs1)) == Self.thumbprint(Self.pem(rsa)))

        let ec = try IndependentJOSE.openSSLKey("EC", in: directory, "ec.pem")
        let bare = directory.path("ec-nopub.pem")
        try IndependentJOSE.run("/usr/bin/openssl", ["ec", "-no_public", "-in", ec.path, "-out", bare.path])
        #expect(try Self.thumbprint(Self.pem(bare)) == Self.thumbprint(Self.pem(ec)), "the public point is computed from d")
    }

    @Test("text around the PEM block is ignored; the first block is the key")
    func surroundingText() throws {
        let directory = TempDirectory()
        let file = try IndependentJOSE.openSSLKey("ED25519", in: directory, "ed.pem")
        let text = "a comment\r\n" + (try String(contentsOf: file, encoding: .utf8)).replacingOccurrences(of: "\n", with: "\r\n") + "trailer\n"
        #expect(try Self.thumbprint(SecureBytes(copying: Array(text.utf8))) == Self.thumbprint(Self.pem(file)))
    }

    @Test("an Ed25519 PKCS#8 v2 key whose public key is another key's is refused")
    func ed25519WrongPublicKey() throws {
        let directory = TempDirectory()
        let der = try Self.der(IndependentJOSE.openSSLKey("ED25519", in: directory, "ed.pem"))
        #expect(der.count == 48)
        // RFC 5958 version 1 with a [1] public key of 32 zero bytes.
        var v2 = Array(der[2...])
        v2[2] = 1
        v2 += [0x81, 0x21, 0x00] + [UInt8](repeating: 0, count: 32)
        let forged = [0x30, UInt8(v2.count)] + v2
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: Self.wrap(forged, label: "PRIVATE KEY")) }
    }

    @Test("every truncation and every one-byte change of a key's DER is refused or read, never a crash", arguments: ["EC", "ED25519"])
    func hostileDER(algorithm: String) throws {
        let directory = TempDirectory()
        let der = try Self.der(IndependentJOSE.openSSLKey(algorithm, in: directory, "key.pem"))
        let original = try Self.thumbprint(Self.wrap(der, label: "PRIVATE KEY"))
        for length in 0..<der.count {
            #expect(throws: JOSEError.self, "truncated to \(length)") { try JWSSigningKey(privateKey: Self.wrap(Array(der[..<length]), label: "PRIVATE KEY")) }
        }
        // The version (after the outer header and the INTEGER's tag and length): 0 ^ 1 is
        // version 1 (RFC 5958), the same key.
        let version = (der[1] < 0x80 ? 2 : 2 + Int(der[1] & 0x7F)) + 2
        for index in der.indices {
            for change: UInt8 in [0x01, 0x80, 0xFF] where !(index == version && change == 0x01) {
                var corrupted = der
                corrupted[index] ^= change
                // A change in the private value may still make a valid key (another one); any
                // other outcome must be a refusal.
                if let read = try? Self.thumbprint(Self.wrap(corrupted, label: "PRIVATE KEY")) {
                    #expect(read != original, "byte \(index) ^ \(change) read as the same key")
                }
            }
        }
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: Self.wrap(der + [0x00], label: "PRIVATE KEY")) }
    }

    @Test(
        "malformed PEM text is refused",
        arguments: [
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n",  // no end line
            "-----BEGIN PRIVATE KEY-----\nMC4C*QAw\n-----END PRIVATE KEY-----\n",  // not base64
            "-----BEGIN PRIVATE KEY-----\nMC4=CAQA\n-----END PRIVATE KEY-----\n",  // data after padding
            "-----BEGIN PRIVATE KEY-----\nMC4\n-----END PRIVATE KEY-----\n",  // not a multiple of 4
            "-----BEGIN PRIVATE KEY-----\nMC5=\n-----END PRIVATE KEY-----\n",  // non-zero leftover bits
            "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n",
            "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n",  // empty
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",  // not a key
            "-----BEGIN PRIVATE KEY-----\nMIQAAAAA\n-----END PRIVATE KEY-----\n",  // a 4-byte length
            "-----BEGIN PRIVATE KEY-----\nMIH/\n-----END PRIVATE KEY-----\n",  // a length past the end
        ])
    func malformedText(text: String) {
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: SecureBytes(copying: Array(text.utf8))) }
    }

    @Test("a PEM body beyond 64 KiB is refused before decoding")
    func oversizedBody() {
        let text = "-----BEGIN PRIVATE KEY-----\n" + String(repeating: "A", count: 70_000) + "\n-----END PRIVATE KEY-----\n"
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: SecureBytes(copying: Array(text.utf8))) }
    }
}
