import Foundation

/// The protected header of a compact JWS (RFC 7515 section 4).
///
/// Only what verification needs is interpreted. Key-carrying parameters (`jwk`, `jku`,
/// `x5u`, `x5c`) are never used to find or trust a key: keys come only from the JWK Set the
/// caller supplies, since a key named by the token itself would let anyone sign.
public struct JOSEHeader: Sendable, Equatable {
    /// `alg` exactly as written (never `none`, see `init(json:)`).
    public let algorithm: String
    /// `kid`, if present.
    public let keyID: String?
    /// `typ`, if present.
    public let type: String?
    /// `cty`, if present.
    public let contentType: String?
    /// Every header parameter, as parsed.
    public let parameters: [String: JSONValue]

    /// The algorithm if it is one this library implements.
    public var knownAlgorithm: JWSAlgorithm? { JWSAlgorithm(name: algorithm) }

    /// Parses and checks a decoded header.
    ///
    /// Rejected: non-object JSON; missing or non-string `alg`; `alg` of `none` in any letter
    /// case (an unsigned token); `enc` (a JWE header); `crit`, because RFC 7515 section
    /// 4.1.11 requires rejecting critical extensions the recipient does not understand and
    /// this library understands none; `b64` other than `true` (RFC 7797 unencoded payloads
    /// would change what the signature covers); `kid`, `typ` or `cty` that are not strings.
    public init(json: Data) throws(JOSEError) {
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(json, maximumDepth: 8)
        } catch {
            throw .malformedToken("header is not valid JSON")
        }
        guard case .object(let parameters) = parsed else { throw .malformedToken("header is not a JSON object") }
        guard case .string(let algorithm)? = parameters["alg"] else {
            throw .malformedToken("header has no string \"alg\"")
        }
        guard algorithm.lowercased() != "none" else { throw .unsupportedAlgorithm("none") }
        guard parameters["enc"] == nil else { throw .malformedToken("JWE (encrypted) tokens are not supported") }
        guard parameters["crit"] == nil else { throw .malformedToken("critical header parameters are not supported") }
        if let b64 = parameters["b64"], b64 != .bool(true) {
            throw .malformedToken("unencoded payloads (b64) are not supported")
        }
        self.algorithm = algorithm
        self.keyID = try Self.optionalString(parameters, "kid")
        self.type = try Self.optionalString(parameters, "typ")
        self.contentType = try Self.optionalString(parameters, "cty")
        self.parameters = parameters
    }

    private static func optionalString(_ parameters: [String: JSONValue], _ name: String) throws(JOSEError) -> String? {
        switch parameters[name] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .malformedToken("header \"\(name)\" is not a string")
        }
    }
}
