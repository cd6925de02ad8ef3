import Foundation

/// A parsed compact-serialised JWS (RFC 7515 section 7.1): `header.payload.signature`.
///
/// Parsing never verifies anything; call `verify(with:)` or `verify(using:allowedAlgorithms:)`
/// (or use `IDTokenValidator`) before trusting the payload. The signature is checked over
/// `signingInput`, the exact ASCII bytes received, never over a re-encoding.
///
/// `description` is redacted: printing a JWS must not print the credential.
public struct JSONWebSignature: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The largest compact serialisation accepted, in bytes. ID tokens are a few KiB; the
    /// bound keeps hostile inputs from costing more than a bounded amount of work.
    public static let maximumSize = 64 * 1024

    /// The decoded protected header.
    public let header: JOSEHeader
    /// The decoded payload bytes.
    public let payload: Data
    /// ASCII `BASE64URL(header) || '.' || BASE64URL(payload)`, as received.
    public let signingInput: Data
    /// The decoded signature bytes (never empty).
    public let signature: Data

    /// Parses a compact JWS from text. See `init(compactSerialization: Data)`.
    public init(compactSerialization text: String) throws(JOSEError) {
        // Check the size before copying anything out of a possibly enormous string.
        guard text.utf8.count <= Self.maximumSize else { throw Self.tooLarge }
        try self.init(bytes: Array(text.utf8))
    }

    /// Parses a compact JWS from its ASCII bytes.
    ///
    /// Rejected, each with `JOSEError.malformedToken` (or `.unsupportedAlgorithm` for
    /// `none`): more than `maximumSize` bytes; anything but exactly three `.`-separated
    /// parts (five parts is a JWE); invalid base64url in any part; an invalid header (see
    /// `JOSEHeader.init(json:)`); an empty signature.
    public init(compactSerialization data: Data) throws(JOSEError) {
        guard data.count <= Self.maximumSize else { throw Self.tooLarge }
        try self.init(bytes: Array(data))
    }

    private static let tooLarge = JOSEError.malformedToken("token exceeds \(maximumSize) bytes")

    private init(bytes: [UInt8]) throws(JOSEError) {
        guard bytes.count <= Self.maximumSize else { throw Self.tooLarge }
        let dot = UInt8(ascii: ".")
        // Split by hand, keeping empty parts, so "a..b" and "a.b." count correctly.
        var dots: [Int] = []
        for (offset, byte) in bytes.enumerated() where byte == dot {
            dots.append(offset)
            guard dots.count <= 4 else { break }
        }
        switch dots.count {
        case 2: break
        case 4: throw JOSEError.malformedToken("JWE (encrypted) tokens are not supported")
        default: throw JOSEError.malformedToken("expected 3 dot-separated parts")
        }
        let headerPart = bytes[..<dots[0]]
        let payloadPart = bytes[(dots[0] + 1)..<dots[1]]
        let signaturePart = bytes[(dots[1] + 1)...]
        guard !headerPart.isEmpty else { throw JOSEError.malformedToken("empty header") }
        guard !signaturePart.isEmpty else { throw JOSEError.malformedToken("empty signature") }

        let headerBytes: Data
        let payload: Data
        let signature: Data
        do {
            headerBytes = try Base64URL.decode(bytes: headerPart)
            payload = try Base64URL.decode(bytes: payloadPart)
            signature = try Base64URL.decode(bytes: signaturePart)
        } catch {
            throw JOSEError.malformedToken("a part is not valid base64url")
        }
        self.header = try JOSEHeader(json: headerBytes)
        self.payload = payload
        self.signingInput = Data(bytes[..<dots[1]])
        self.signature = signature
    }

    /// Verifies the signature with one key.
    /// - Throws: `.unsupportedAlgorithm` if `alg` is not implemented, `.keyMismatch` if the
    ///   key cannot be used with `alg`, `.badSignature` if the signature does not verify.
    public func verify(with key: JSONWebKey) throws(JOSEError) {
        guard let algorithm = header.knownAlgorithm else {
            throw .unsupportedAlgorithm(RegisteredAlgorithmName.sanitized(header.algorithm))
        }
        try key.verify(signature: signature, signingInput: signingInput, algorithm: algorithm)
    }

    /// Selects the key from `keySet` and verifies the signature with it.
    ///
    /// - With a `kid`: only keys with exactly that `kid` are candidates. None -> 
    ///   `.unknownKeyID` (the caller may refetch the JWKS once); some, but none usable with
    ///   `alg` -> `.keyMismatch`.
    /// - Without a `kid`: every key usable with `alg` is a candidate; none -> `.unknownKeyID`.
    /// Succeeds if one candidate verifies (providers may publish a `kid` twice during
    /// rotation; every key in the set is trusted by the caller anyway).
    /// - Returns: the key that verified.
    @discardableResult
    public func verify(
        using keySet: JSONWebKeySet, allowedAlgorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases)
    ) throws(JOSEError) -> JSONWebKey {
        guard let algorithm = header.knownAlgorithm, allowedAlgorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm(RegisteredAlgorithmName.sanitized(header.algorithm))
        }
        let candidates: [JSONWebKey]
        if let keyID = header.keyID {
            let named = keySet.keys(withID: keyID)
            if named.isEmpty {
                if let skipped = keySet.skippedKeys.first(where: { $0.keyID.map { exactlyEqual($0, keyID) } ?? false }) {
                    throw .keyMismatch("the key with this kid was rejected: \(skipped.reason)")
                }
                throw .unknownKeyID
            }
            candidates = named.filter { $0.isUsable(with: algorithm) }
            guard !candidates.isEmpty else {
                throw .keyMismatch(named[0].incompatibility(with: algorithm) ?? "unusable key")
            }
        } else {
            candidates = keySet.keys.filter { $0.isUsable(with: algorithm) }
            guard !candidates.isEmpty else { throw .unknownKeyID }
        }
        for key in candidates {
            do {
                try key.verify(signature: signature, signingInput: signingInput, algorithm: algorithm)
                return key
            } catch {
                continue
            }
        }
        throw .badSignature
    }

    /// A redacted description: algorithm and key id only.
    public var description: String {
        "JSONWebSignature(alg: \(RegisteredAlgorithmName.sanitized(header.algorithm)), kid: \(header.keyID == nil ? "none" : "present"), <redacted>)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
