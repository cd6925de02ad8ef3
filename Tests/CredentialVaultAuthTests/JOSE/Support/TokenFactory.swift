import CredentialVault
import CredentialVaultAuth
import Foundation
import Synchronization

/// Keys generated once per test process (RSA generation is the slow part).
enum TestKeys {
    static let rsa: Result<TestSigningKey, any Error> = Result { try .rsa() }
    static let rsaOther: Result<TestSigningKey, any Error> = Result { try .rsa() }
    static let rsa1024: Result<TestSigningKey, any Error> = Result { try .rsa(bits: 1024) }
    static let p256: Result<TestSigningKey, any Error> = Result { try .p256() }
    static let p256Other: Result<TestSigningKey, any Error> = Result { try .p256() }
    static let ed25519: Result<TestSigningKey, any Error> = Result { try .ed25519() }
    static let ed25519Other: Result<TestSigningKey, any Error> = Result { try .ed25519() }

    /// The signing key for `algorithm`.
    static func key(for algorithm: JWSAlgorithm) throws -> TestSigningKey {
        switch algorithm {
        case .rs256: return try rsa.get()
        case .es256: return try p256.get()
        case .edDSA: return try ed25519.get()
        }
    }

    /// A different key of the same type as `key(for:)`.
    static func otherKey(for algorithm: JWSAlgorithm) throws -> TestSigningKey {
        switch algorithm {
        case .rs256: return try rsaOther.get()
        case .es256: return try p256Other.get()
        case .edDSA: return try ed25519Other.get()
        }
    }
}

/// Builds signed compact tokens for the tests.
enum TokenFactory {
    static let issuer = "https://id.example.test"
    static let clientID = "cli"
    static let nonce = "n-0S6_WzA2Mj"
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// Serialises JSON deterministically.
    static func json(_ value: JSONValue) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// `BASE64URL(header).BASE64URL(payload).BASE64URL(sign(signing input))`.
    static func compact(header: Data, payload: Data, sign: (Data) throws -> Data) throws -> String {
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return signingInput + "." + Base64URL.encode(try sign(Data(signingInput.utf8)))
    }

    /// A token with the given header and claims, signed by `key`.
    static func token(header: JSONValue, claims: JSONValue, key: TestSigningKey) throws -> String {
        try compact(header: json(header), payload: json(claims), sign: key.sign)
    }

    /// The claims of a valid ID token at `now`.
    static func standardClaims() -> [String: JSONValue] {
        [
            "iss": .string(issuer), "sub": "alice", "aud": .string(clientID),
            "exp": .number(now.timeIntervalSince1970 + 300), "iat": .number(now.timeIntervalSince1970),
            "nonce": .string(nonce), "email": "alice@example.test", "email_verified": true,
            "name": "Alice Example", "preferred_username": "alice",
        ]
    }

    /// An ID token signed with the key for `algorithm` under `kid`, with claims edited by `edit`.
    static func idToken(
        _ algorithm: JWSAlgorithm, kid: String? = "k1", header extra: [String: JSONValue] = [:],
        edit: (inout [String: JSONValue]) -> Void = { _ in }
    ) throws -> String {
        var header: [String: JSONValue] = ["alg": .string(algorithm.rawValue), "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        header.merge(extra) { _, new in new }
        var claims = standardClaims()
        edit(&claims)
        return try token(header: .object(header), claims: .object(claims), key: TestKeys.key(for: algorithm))
    }

    /// A JWKS holding the public key for `algorithm` under `kid`.
    static func keySet(_ algorithm: JWSAlgorithm, kid: String? = "k1") throws -> JSONWebKeySet {
        JSONWebKeySet(keys: [try TestKeys.key(for: algorithm).publicKey(kid: kid)])
    }

    /// A JWKS with the three standard keys under "rsa", "ec" and "ed".
    static func fullKeySet() throws -> JSONWebKeySet {
        JSONWebKeySet(keys: [
            try TestKeys.rsa.get().publicKey(kid: "rsa"), try TestKeys.p256.get().publicKey(kid: "ec"),
            try TestKeys.ed25519.get().publicKey(kid: "ed"),
        ])
    }

    /// The kid of `algorithm`'s key in `fullKeySet()`.
    static func fullSetKeyID(_ algorithm: JWSAlgorithm) -> String {
        switch algorithm {
        case .rs256: return "rsa"
        case .es256: return "ec"
        case .edDSA: return "ed"
        }
    }

    /// A validator for the standard issuer and client at `now` (plus `offset` seconds).
    static func validator(
        offset: TimeInterval = 0, skew: Duration = IDTokenValidator.defaultClockSkew,
        algorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases)
    ) -> IDTokenValidator {
        IDTokenValidator(
            issuer: issuer, clientID: clientID, allowedAlgorithms: algorithms, clockSkew: skew,
            clock: ManualClock(start: now.addingTimeInterval(offset)))
    }

    /// Replaces the segment at `index` (0 header, 1 payload, 2 signature).
    static func replacingSegment(_ token: String, _ index: Int, with segment: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = segment
        return parts.joined(separator: ".")
    }

    /// The segment at `index`.
    static func segment(_ token: String, _ index: Int) -> String {
        String(token.split(separator: ".", omittingEmptySubsequences: false)[index])
    }
}

/// Records the `refresh` flags a JWKS provider closure was called with.
final class CallLog: Sendable {
    private let storage = Mutex<[Bool]>([])
    func append(_ value: Bool) { storage.withLock { $0.append(value) } }
    var values: [Bool] { storage.withLock { $0 } }
}
