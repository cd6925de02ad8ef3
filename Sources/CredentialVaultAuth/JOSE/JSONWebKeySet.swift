import Foundation

/// A JWK Set (RFC 7517 section 5), as served at a provider's `jwks_uri`.
///
/// Members this library cannot use (unknown `kty` such as `oct`, other curves, weak or
/// malformed keys) are skipped, not fatal, and listed in `skippedKeys` with a reason: one
/// odd key must not lock every user out. Well-formed keys with `use: enc` are kept but are
/// never selected for verification. Only the document's overall shape and size are fatal.
public struct JSONWebKeySet: Sendable, Equatable {
    /// A JWK that was left out of the set, with the reason (fixed text, no key bytes).
    public struct SkippedKey: Sendable, Equatable {
        /// The skipped key's `kid`, if it had a string one.
        public let keyID: String?
        /// Why it was skipped.
        public let reason: String
    }

    /// The largest JWKS document accepted, in bytes.
    public static let maximumSize = 256 * 1024
    /// The most keys considered; providers publish a handful.
    public static let maximumKeyCount = 100

    /// The usable keys, in document order.
    public let keys: [JSONWebKey]
    /// The keys that were skipped and why.
    public let skippedKeys: [SkippedKey]

    /// A set made of the given keys.
    public init(keys: [JSONWebKey]) {
        self.keys = keys
        self.skippedKeys = []
    }

    /// Parses a JWKS document: a JSON object with a `keys` array.
    /// - Throws: `JOSEError.invalidKey` if the document is too large, is not JSON, has no
    ///   `keys` array, or lists more than `maximumKeyCount` keys.
    public init(json: Data) throws(JOSEError) {
        guard json.count <= Self.maximumSize else { throw .invalidKey("JWK Set exceeds \(Self.maximumSize) bytes") }
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(json, maximumDepth: 8)
        } catch {
            throw .invalidKey("JWK Set is not valid JSON")
        }
        guard case .array(let entries)? = parsed["keys"] else { throw .invalidKey("JWK Set has no \"keys\" array") }
        guard entries.count <= Self.maximumKeyCount else { throw .invalidKey("JWK Set has too many keys") }
        var keys: [JSONWebKey] = []
        var skipped: [SkippedKey] = []
        for entry in entries {
            guard case .object(let members) = entry else {
                skipped.append(SkippedKey(keyID: nil, reason: "entry is not a JSON object"))
                continue
            }
            do {
                keys.append(try JSONWebKey(members: members))
            } catch {
                skipped.append(SkippedKey(keyID: members["kid"]?.stringValue, reason: error.reason))
            }
        }
        self.keys = keys
        self.skippedKeys = skipped
    }

    /// The keys whose `kid` is exactly `keyID` (byte-for-byte).
    public func keys(withID keyID: String) -> [JSONWebKey] {
        keys.filter { key in key.keyID.map { exactlyEqual($0, keyID) } ?? false }
    }
}
