import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("Compact JWS/JWT parsing", .ownThread)
struct TokenParsingTests {
    private static let header = Base64URL.encode(Data(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#.utf8))
    private static let payload = Base64URL.encode(Data(#"{"iss":"https://id","sub":"alice"}"#.utf8))
    private static let signature = Base64URL.encode(Data(repeating: 7, count: 256))

    private func malformed(_ token: String) -> JOSEError? {
        do {
            _ = try JSONWebToken(compactSerialization: token)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesWellFormedToken() throws {
        let token = try JSONWebToken(compactSerialization: "\(Self.header).\(Self.payload).\(Self.signature)")
        #expect(token.header.algorithm == "RS256")
        #expect(token.header.knownAlgorithm == .rs256)
        #expect(token.header.keyID == "k1")
        #expect(token.header.type == "JWT")
        #expect(token.claims["sub"] == "alice")
        #expect(token.signingInput == Data("\(Self.header).\(Self.payload)".utf8))
        #expect(token.signature.count == 256)
        let fromData = try JSONWebToken(compactSerialization: Data("\(Self.header).\(Self.payload).\(Self.signature)".utf8))
        #expect(fromData == token)
    }

    @Test(arguments: [
        "", ".", "..", "...", "a", "a.b", "a.b.c.d", "a.b.c.d.e.f",
    ])
    func rejectsWrongPartCount(_ token: String) {
        #expect(malformed(token) != nil)
    }

    @Test func rejectsJWE() {
        let jwe = Base64URL.encode(Data(#"{"alg":"RSA-OAEP","enc":"A256GCM"}"#.utf8)) + ".a.b.c.d"
        #expect(malformed(jwe) == .malformedToken("JWE (encrypted) tokens are not supported"))
        let encHeader = Base64URL.encode(Data(#"{"alg":"RS256","enc":"A256GCM"}"#.utf8))
        #expect(malformed("\(encHeader).\(Self.payload).\(Self.signature)") != nil)
    }

    @Test func rejectsBadBase64InEveryPart() {
        for index in 0..<3 {
            var parts = [Self.header, Self.payload, Self.signature]
            parts[index] = "ab+c"
            #expect(malformed(parts.joined(separator: ".")) == .malformedToken("a part is not valid base64url"))
        }
        #expect(malformed("\(Self.header)=.\(Self.payload).\(Self.signature)") != nil)
    }

    @Test func rejectsHugeInput() {
        let huge = Self.header + "." + String(repeating: "A", count: JSONWebSignature.maximumSize) + "." + Self.signature
        #expect(malformed(huge) == .malformedToken("token exceeds 65536 bytes"))
        #expect(throws: JOSEError.malformedToken("token exceeds 65536 bytes")) { try JSONWebToken(compactSerialization: Data(huge.utf8)) }
        // A huge input with no dots is refused by size before anything else.
        #expect(malformed(String(repeating: ".", count: 70_000)) == .malformedToken("token exceeds 65536 bytes"))
    }

    @Test(arguments: [
        #"[]"#, #""RS256""#, #"42"#, #"null"#, #"{"alg":1}"#, #"{"kid":"k"}"#, #"{"alg":"RS256","kid":7}"#,
        #"{"alg":"RS256","typ":["JWT"]}"#, #"{"alg":"RS256","crit":["exp"],"exp":1}"#,
        #"{"alg":"RS256","b64":false}"#, #"{"alg":"RS256","cty":"JWT"}"#, #"{"alg":"RS256","alg":"RS256"}"#,
        #"{"alg":"RS256""#, "\u{FEFF}{\"alg\":\"RS256\"}",
    ])
    func rejectsBadHeaders(_ headerJSON: String) {
        let token = "\(Base64URL.encode(Data(headerJSON.utf8))).\(Self.payload).\(Self.signature)"
        #expect(malformed(token) != nil)
    }

    @Test(arguments: [#"{"alg":"none"}"#, #"{"alg":"NONE"}"#, #"{"alg":"None","typ":"JWT"}"#])
    func rejectsAlgNone(_ headerJSON: String) {
        let header = Base64URL.encode(Data(headerJSON.utf8))
        #expect(malformed("\(header).\(Self.payload).") != nil)
        #expect(malformed("\(header).\(Self.payload).\(Self.signature)") == .unsupportedAlgorithm("none"))
    }

    @Test(arguments: [#"[1,2]"#, #""a string""#, #"123"#, #"null"#, #"true"#, #"{"a":1"#, ""])
    func rejectsNonObjectClaims(_ claims: String) {
        let token = "\(Self.header).\(Base64URL.encode(Data(claims.utf8))).\(Self.signature)"
        #expect(malformed(token) != nil)
        // ... while the JWS layer accepts any payload bytes (RFC 8037's example is plain text).
        #expect((try? JSONWebSignature(compactSerialization: token)) != nil)
    }

    @Test func rejectsEmptySignatureAndHeader() {
        #expect(malformed("\(Self.header).\(Self.payload).") == .malformedToken("empty signature"))
        #expect(malformed(".\(Self.payload).\(Self.signature)") == .malformedToken("empty header"))
    }

    @Test func descriptionsAreRedacted() throws {
        let text = "\(Self.header).\(Self.payload).\(Self.signature)"
        let token = try JSONWebToken(compactSerialization: text)
        for rendered in ["\(token)", String(reflecting: token), "\(token.jws)"] {
            #expect(!rendered.contains(Self.payload))
            #expect(!rendered.contains(Self.signature))
            #expect(!rendered.contains("alice"))
        }
    }

    /// Random mutations of a real signed token: parsing and validation never trap, and any
    /// mutation that still validates must be byte-identical to the original in what is signed.
    @Test func mutatedTokensNeverCrash() throws {
        let original = try TokenFactory.idToken(.es256)
        let keySet = try TokenFactory.keySet(.es256)
        let validator = TokenFactory.validator()
        let originalToken = try JSONWebToken(compactSerialization: original)
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("AZaz09-_.=+/{}\" \u{0}".utf8)
        for _ in 0..<1500 {
            var bytes = Array(original.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                case 1: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                default: if bytes.count > 1 { bytes.remove(at: position) }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let verified = try? validator.validate(text, keySet: keySet, nonce: TokenFactory.nonce) {
                let token = try JSONWebToken(compactSerialization: text)
                #expect(token.signingInput == originalToken.signingInput)
                #expect(token.signature == originalToken.signature)
                #expect(verified.subject == "alice")
            }
        }
    }
}
