import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("PKCE", .ownThread)
struct PKCETests {
    /// RFC 7636 appendix B.
    @Test func rfc7636AppendixB() throws {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(PKCE.challenge(for: verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let pair = try #require(PKCE(verifier: verifier))
        #expect(pair.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(PKCE.method == "S256")
    }

    @Test func generatesFreshValidPairs() {
        var seen = Set<String>()
        for _ in 0..<50 {
            let pair = PKCE.generate()
            #expect(pair.verifier.utf8.count == 43)
            #expect(PKCE.isValidVerifier(pair.verifier))
            #expect(pair.challenge == PKCE.challenge(for: pair.verifier))
            #expect(pair.challenge.utf8.count == 43)
            seen.insert(pair.verifier)
        }
        #expect(seen.count == 50)
    }

    @Test func validatesVerifiers() {
        #expect(PKCE(verifier: String(repeating: "a", count: 42)) == nil)
        #expect(PKCE(verifier: String(repeating: "a", count: 129)) == nil)
        #expect(PKCE(verifier: String(repeating: "a", count: 42) + "+") == nil)
        #expect(PKCE(verifier: String(repeating: "é", count: 43)) == nil)
        #expect(PKCE(verifier: String(repeating: "a-._~", count: 25)) != nil)
        #expect(PKCE(verifier: String(repeating: "Z", count: 128)) != nil)
    }

    @Test func descriptionRedactsTheVerifier() {
        let pair = PKCE.generate()
        #expect(!"\(pair)".contains(pair.verifier))
        #expect(!String(reflecting: pair).contains(pair.verifier))
        #expect("\(pair)".contains(pair.challenge))
    }
}
