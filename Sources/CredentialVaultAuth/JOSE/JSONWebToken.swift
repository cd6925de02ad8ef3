import Foundation

/// A compact JWS whose payload is a JWT Claims Set (RFC 7519): a JSON object.
///
/// Parsing does not verify the signature or any claim; `IDTokenValidator` does both. The
/// description is redacted so that logging a token object never logs the token.
public struct JSONWebToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The underlying JWS (header, payload bytes, signing input, signature).
    public let jws: JSONWebSignature
    /// The claims, parsed from the payload (unverified until the signature is checked).
    public let claims: [String: JSONValue]

    /// The protected header.
    public var header: JOSEHeader { jws.header }
    /// The bytes the signature covers.
    public var signingInput: Data { jws.signingInput }
    /// The decoded signature.
    public var signature: Data { jws.signature }

    /// Parses a compact JWT from text; see `init(compactSerialization: Data)`.
    public init(compactSerialization text: String) throws(JOSEError) {
        try self.init(jws: JSONWebSignature(compactSerialization: text))
    }

    /// Parses a compact JWT from its ASCII bytes.
    ///
    /// Everything `JSONWebSignature` rejects is rejected, and also a payload that is not a
    /// JSON object (RFC 7519 section 7.2 step 10) or nests deeper than 16 levels.
    /// A `cty` of `JWT` (a nested JWT) is refused: ID tokens are never nested, and
    /// following nesting would verify only the outer layer.
    public init(compactSerialization data: Data) throws(JOSEError) {
        try self.init(jws: JSONWebSignature(compactSerialization: data))
    }

    /// Interprets an already parsed JWS as a JWT.
    public init(jws: JSONWebSignature) throws(JOSEError) {
        if let contentType = jws.header.contentType, contentType.uppercased() == "JWT" {
            throw .malformedToken("nested JWTs are not supported")
        }
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(jws.payload, maximumDepth: 16)
        } catch {
            throw .malformedToken("claims are not valid JSON")
        }
        guard case .object(let claims) = parsed else { throw .malformedToken("claims are not a JSON object") }
        self.jws = jws
        self.claims = claims
    }

    /// A redacted description: algorithm and whether a key id is present.
    public var description: String {
        "JSONWebToken(alg: \(RegisteredAlgorithmName.sanitized(header.algorithm)), kid: \(header.keyID == nil ? "none" : "present"), <redacted>)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
