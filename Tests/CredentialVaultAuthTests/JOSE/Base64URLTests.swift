import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("Base64URL", .ownThread)
struct Base64URLTests {
    /// RFC 4648 section 10 vectors, unpadded.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(encoded) == Data(plain.utf8))
    }

    @Test func urlSafeAlphabet() throws {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(try Base64URL.decode("-_-_") == Data([0xFB, 0xFF, 0xBF]))
    }

    @Test func roundTripsEveryLength() throws {
        for length in 0..<100 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
            #expect(try Base64URL.decode(Base64URL.encode(bytes)) == Data(bytes))
        }
    }

    @Test(arguments: [
        "Zg==",  // padding
        "Zm9v YmFy",  // whitespace
        "Zm+v",  // standard alphabet
        "Zm/v",
        "Z",  // 4k+1 characters
        "Zm9vY",
        "Zh",  // non-canonical: unused bits set
        "Zm9",  // non-canonical
        "Zé",  // non-ASCII
        "Zm9v\n",
    ])
    func rejectsNonCanonicalOrForeignText(_ text: String) {
        #expect(throws: JOSEError.invalidBase64URL) { try Base64URL.decode(text) }
    }

    @Test func decodesDataInput() throws {
        #expect(try Base64URL.decode(Data("Zm9v".utf8)) == Data("foo".utf8))
        #expect(throws: JOSEError.invalidBase64URL) { try Base64URL.decode(Data([0xFF, 0xFE])) }
        #expect(throws: JOSEError.invalidBase64URL) { try Base64URL.decode(Data([0x5A, 0x6D, 0x00, 0x76])) }  // NUL
    }
}
