import CredentialVault
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("ID token validation", .ownThread)
struct IDTokenValidatorTests {
    private let now = TokenFactory.now.timeIntervalSince1970

    /// Validates a standard token edited by `edit`, at `offset` seconds after `now`.
    private func validate(
        _ algorithm: JWSAlgorithm = .es256, offset: TimeInterval = 0, skew: Duration = .seconds(60),
        nonce: String? = TokenFactory.nonce, header: [String: JSONValue] = [:],
        edit: (inout [String: JSONValue]) -> Void = { _ in }
    ) throws(IDTokenError) -> VerifiedIDToken {
        let token: String
        let keySet: JSONWebKeySet
        do {
            token = try TokenFactory.idToken(algorithm, header: header, edit: edit)
            keySet = try TokenFactory.keySet(algorithm)
        } catch {
            Issue.record("fixture failed: \(error)")
            throw .malformed("fixture")
        }
        return try TokenFactory.validator(offset: offset, skew: skew).validate(token, keySet: keySet, nonce: nonce)
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func validTokenYieldsClaims(_ algorithm: JWSAlgorithm) throws {
        let verified = try validate(algorithm)
        #expect(verified.subject == "alice")
        #expect(verified.issuer == TokenFactory.issuer)
        #expect(verified.audience == [TokenFactory.clientID])
        #expect(verified.email == "alice@example.test")
        #expect(verified.emailVerified == true)
        #expect(verified.name == "Alice Example")
        #expect(verified.preferredUsername == "alice")
        #expect(verified.nonce == TokenFactory.nonce)
        #expect(verified.algorithm == algorithm)
        #expect(verified.keyID == "k1")
        #expect(verified.expiresAt == TokenFactory.now.addingTimeInterval(300))
        #expect(verified.issuedAt == TokenFactory.now)
        #expect(verified.claims["sub"] == "alice")
        let stored = try JSONEncoder().encode(verified)
        #expect(try JSONDecoder().decode(VerifiedIDToken.self, from: stored) == verified)
    }

    @Test func issuerMustMatchExactly() throws {
        for issuer: JSONValue in ["https://id.example.test/", "https://ID.example.test", "https://evil.test", ""] {
            #expect(throws: IDTokenError.issuerMismatch) { try validate { $0["iss"] = issuer } }
        }
        #expect(throws: IDTokenError.missingClaim("iss")) { try validate { $0["iss"] = nil } }
        #expect(throws: IDTokenError.malformed("claim \"iss\" is not a string")) { try validate { $0["iss"] = 5 } }
        // Canonically equivalent but different code points: Swift's == would say equal.
        let precomposed = IDTokenValidator(issuer: "https://caf\u{E9}.test", clientID: "cli", clock: ManualClock(start: TokenFactory.now))
        let token = try TokenFactory.idToken(.es256) { $0["iss"] = "https://cafe\u{301}.test" }
        #expect(throws: IDTokenError.issuerMismatch) {
            try precomposed.validate(token, keySet: TokenFactory.keySet(.es256), nonce: TokenFactory.nonce)
        }
    }

    @Test func audienceAndAuthorizedParty() throws {
        _ = try validate { $0["aud"] = ["cli"] }
        _ = try validate { $0["aud"] = ["cli", "api"]; $0["azp"] = "cli" }
        _ = try validate { $0["azp"] = "cli" }
        #expect(throws: IDTokenError.authorizedPartyMismatch) { try validate { $0["aud"] = ["cli", "api"] } }
        #expect(throws: IDTokenError.authorizedPartyMismatch) { try validate { $0["aud"] = ["cli", "api"]; $0["azp"] = "api" } }
        #expect(throws: IDTokenError.authorizedPartyMismatch) { try validate { $0["azp"] = "other" } }
        #expect(throws: IDTokenError.audienceMismatch) { try validate { $0["aud"] = "other" } }
        #expect(throws: IDTokenError.audienceMismatch) { try validate { $0["aud"] = ["api", "other"]; $0["azp"] = "cli" } }
        #expect(throws: IDTokenError.audienceMismatch) { try validate { $0["aud"] = "CLI" } }
        #expect(throws: IDTokenError.missingClaim("aud")) { try validate { $0["aud"] = nil } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["aud"] = [] } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["aud"] = ["cli", 3] } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["aud"] = ["cli": true] } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["azp"] = ["cli"] } }
    }

    @Test func expiryAtTheSkewBoundary() throws {
        // exp = now + 300; default skew 60 s: valid strictly before exp + 60.
        _ = try validate(offset: 359)
        _ = try validate(offset: 359.999)
        #expect(throws: IDTokenError.expired) { try validate(offset: 360) }
        #expect(throws: IDTokenError.expired) { try validate(offset: 100_000) }
        // With no skew, the boundary is exp itself.
        _ = try validate(offset: 299.5, skew: .zero)
        #expect(throws: IDTokenError.expired) { try validate(offset: 300, skew: .zero) }
        #expect(throws: IDTokenError.missingClaim("exp")) { try validate { $0["exp"] = nil } }
        #expect(throws: IDTokenError.malformed("claim \"exp\" is not a number")) { try validate { $0["exp"] = "1700000300" } }
    }

    @Test func issuedAtAtTheSkewBoundary() throws {
        _ = try validate { $0["iat"] = .number(now + 60) }
        #expect(throws: IDTokenError.issuedInFuture) { try validate { $0["iat"] = .number(now + 60.5) } }
        #expect(throws: IDTokenError.issuedInFuture) { try validate { $0["iat"] = .number(now + 3600) } }
        _ = try validate(skew: .seconds(120)) { $0["iat"] = .number(now + 120) }
        #expect(throws: IDTokenError.issuedInFuture) { try validate(skew: .seconds(120)) { $0["iat"] = .number(now + 121) } }
        #expect(throws: IDTokenError.missingClaim("iat")) { try validate { $0["iat"] = nil } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["iat"] = nil as JSONValue } }
    }

    @Test func notBeforeAtTheSkewBoundary() throws {
        _ = try validate { $0["nbf"] = .number(now + 60) }
        #expect(throws: IDTokenError.notYetValid) { try validate { $0["nbf"] = .number(now + 61) } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["nbf"] = true } }
    }

    @Test func clockSkewIsBounded() throws {
        #expect(TokenFactory.validator(skew: .seconds(3600)).clockSkew == .seconds(600))
        #expect(TokenFactory.validator(skew: .seconds(-5)).clockSkew == .zero)
        #expect(TokenFactory.validator().clockSkew == .seconds(60))
        // An hour requested is ten minutes granted: exp (now + 300) + 600 is the limit.
        _ = try validate(offset: 899, skew: .seconds(3600))
        #expect(throws: IDTokenError.expired) { try validate(offset: 900, skew: .seconds(3600)) }
    }

    @Test func nonceIsCheckedWhenExpected() throws {
        #expect(throws: IDTokenError.nonceMismatch) { try validate(nonce: "other") }
        #expect(throws: IDTokenError.nonceMismatch) { try validate(nonce: String(TokenFactory.nonce.dropLast())) }
        #expect(throws: IDTokenError.nonceMismatch) { try validate(nonce: TokenFactory.nonce + "x") }
        #expect(throws: IDTokenError.nonceMismatch) { try validate(nonce: "") }
        #expect(throws: IDTokenError.nonceMismatch) { try validate { $0["nonce"] = nil } }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate { $0["nonce"] = 1 } }
        // Without an expected nonce (e.g. refresh), the claim is not required.
        _ = try validate(nonce: nil) { $0["nonce"] = nil }
        #expect(try validate(nonce: nil).nonce == TokenFactory.nonce)
    }

    @Test func subjectIsRequired() {
        #expect(throws: IDTokenError.missingClaim("sub")) { try validate { $0["sub"] = nil } }
        #expect(throws: IDTokenError.malformed("claim \"sub\" is empty")) { try validate { $0["sub"] = "" } }
    }

    @Test func accessTokensAreNotIDTokens() {
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate(header: ["typ": "at+jwt"]) }
        expectThrows({ (error: IDTokenError) in error.kind == "malformed" }) { try validate(header: ["typ": "application/AT+JWT"]) }
    }

    @Test func signatureIsCheckedBeforeClaims() throws {
        // A forged token with a wrong issuer reports the signature, not the issuer.
        let token = try TokenFactory.idToken(.rs256) { $0["iss"] = "https://evil.test" }
        let keySet = JSONWebKeySet(keys: [try TestKeys.rsaOther.get().publicKey(kid: "k1")])
        #expect(throws: IDTokenError.badSignature) {
            try TokenFactory.validator().validate(token, keySet: keySet, nonce: TokenFactory.nonce)
        }
    }

    @Test func unknownKeyIDThenRefetchedKeySet() throws {
        let token = try TokenFactory.idToken(.rs256, kid: "2024-rotated")
        let stale = try TokenFactory.keySet(.rs256, kid: "2023")
        let validator = TokenFactory.validator()
        #expect(throws: IDTokenError.unknownKeyID) { try validator.validate(token, keySet: stale, nonce: TokenFactory.nonce) }
        let fresh = try JSONWebKeySet(json: TokenFactory.json([
            "keys": [.object(TestKeys.rsa.get().jwk(kid: "2024-rotated", alg: "RS256", use: "sig"))],
        ]))
        #expect(try validator.validate(token, keySet: fresh, nonce: TokenFactory.nonce).keyID == "2024-rotated")
    }

    @Test func asyncValidationRefetchesOnceOnUnknownKeyID() async throws {
        let token = try TokenFactory.idToken(.edDSA, kid: "new")
        let stale = try TokenFactory.keySet(.edDSA, kid: "old")
        let fresh = try TokenFactory.keySet(.edDSA, kid: "new")
        let validator = TokenFactory.validator()
        let calls = CallLog()
        let verified = try await validator.validate(token, nonce: TokenFactory.nonce) { refresh in
            calls.append(refresh)
            return refresh ? fresh : stale
        }
        #expect(verified.keyID == "new")
        #expect(calls.values == [false, true])

        // Still unknown after the refetch: exactly one refetch, then the typed error.
        let stillStale = CallLog()
        await #expect(throws: IDTokenError.unknownKeyID) {
            _ = try await validator.validate(token, nonce: TokenFactory.nonce) { refresh in
                stillStale.append(refresh)
                return stale
            }
        }
        #expect(stillStale.values == [false, true])

        // Other failures never trigger a refetch.
        let noRefetch = CallLog()
        await #expect(throws: IDTokenError.nonceMismatch) {
            _ = try await validator.validate(token, nonce: "other") { refresh in
                noRefetch.append(refresh)
                return fresh
            }
        }
        #expect(noRefetch.values == [false])
    }

    @Test func algorithmsOutsideTheAllowListAreRefused() throws {
        let validator = TokenFactory.validator(algorithms: [.rs256])
        let token = try TokenFactory.idToken(.es256)
        #expect(throws: IDTokenError.unsupportedAlgorithm("ES256")) {
            try validator.validate(token, keySet: TokenFactory.keySet(.es256), nonce: TokenFactory.nonce)
        }
    }

    @Test func malformedInputsAreTypedErrors() throws {
        let validator = TokenFactory.validator()
        let keySet = try TokenFactory.keySet(.es256)
        for input in ["", "garbage", "a.b.c", "a.b", String(repeating: "A", count: 70_000), "..", "\u{0}.\u{0}.\u{0}"] {
            expectThrows({ (error: IDTokenError) in error.kind == "malformed" }, "\(input.prefix(20))") { try validator.validate(input, keySet: keySet, nonce: nil) }
        }
    }

    @Test func errorReasonsNeverContainTokenMaterial() throws {
        let secretish = "SENSITIVE-\(UUID().uuidString)"
        let keySet = try TokenFactory.keySet(.es256)
        var produced: [(IDTokenError, String)] = []
        let edits: [(inout [String: JSONValue]) -> Void] = [
            { $0["iss"] = .string(secretish) }, { $0["aud"] = .string(secretish) }, { $0["azp"] = .string(secretish) },
            { $0["nonce"] = .string(secretish) }, { $0["exp"] = .string(secretish) }, { $0["sub"] = nil },
            { $0["aud"] = [.string(secretish), 1] },
        ]
        for edit in edits {
            let token = try TokenFactory.idToken(.es256, kid: "k1", edit: edit)
            do {
                _ = try TokenFactory.validator().validate(token, keySet: keySet, nonce: secretish + "n")
                Issue.record("expected a failure")
            } catch {
                produced.append((error, token))
            }
        }
        let tokenKid = try TokenFactory.idToken(.es256, kid: secretish)
        do { _ = try TokenFactory.validator().validate(tokenKid, keySet: keySet, nonce: nil) } catch { produced.append((error, tokenKid)) }
        let badAlg = try TokenFactory.token(header: ["alg": .string(secretish)], claims: [:], key: TestKeys.p256.get())
        do { _ = try TokenFactory.validator().validate(badAlg, keySet: keySet, nonce: nil) } catch { produced.append((error, badAlg)) }
        #expect(produced.count == edits.count + 2)
        for (error, token) in produced {
            let texts = [error.reason, "\(error)", String(reflecting: error)]
            for text in texts {
                #expect(!text.contains(secretish))
                for segment in token.split(separator: ".") { #expect(!text.contains(segment)) }
            }
        }
    }
}
