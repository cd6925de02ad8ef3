import Foundation

/// An access token for one resource (RFC 8707), obtained with the session's refresh token and
/// stored in the session record beside the main access token. `description` never shows it.
public struct ResourceToken: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access token (DPoP-bound when the session is).
    public var accessToken: String
    /// When it expires (`nil`: unknown, treated as not expiring).
    public var expiresAt: Date?
    /// The scopes the provider granted with it, space separated.
    public var scope: String?
    /// When it was obtained.
    public var obtainedAt: Date

    /// Creates a resource token.
    public init(accessToken: String, expiresAt: Date? = nil, scope: String? = nil, obtainedAt: Date = Date()) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.scope = scope
        self.obtainedAt = obtainedAt
    }

    /// Whether it is still valid `minTTL` after `now`, and (like the main token's refresh
    /// rule) not within `min(margin, lifetime / 2)` of its expiry: a token about to expire is
    /// replaced before it is handed out. A token whose expiry is unknown lasts.
    func lasts(_ minTTL: Duration, margin: Duration, at now: Date) -> Bool {
        guard let expiresAt else { return true }
        let lifetime = max(0, expiresAt.timeIntervalSince(obtainedAt))
        let needed = max(minTTL.secondsValue, min(margin.secondsValue, lifetime / 2))
        return expiresAt.timeIntervalSince(now) > needed || (needed == 0 && expiresAt > now)
    }

    /// How long it lives from when it was obtained (`nil`: unknown).
    var lifetime: Duration? { expiresAt.map { .clamped(seconds: max(0, $0.timeIntervalSince(obtainedAt))) } }

    /// Redacted: the expiry only.
    public var description: String {
        "ResourceToken(expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"), token redacted)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}

/// The per-resource tokens of a session, keyed by resource indicator: bounded in number and
/// key length, on write (the oldest token makes room) and on read (a stored record beyond the
/// bounds is refused as corrupted, never decoded into unbounded memory).
struct ResourceTokenSet: Sendable, Hashable, Codable {
    /// The most resources one session holds tokens for.
    static let maximumCount = 32
    /// The longest access token accepted from a stored record (bytes).
    static let maximumTokenLength = 64 * 1024

    private(set) var tokens: [String: ResourceToken] = [:]

    init() {}

    subscript(resource: String) -> ResourceToken? { tokens[resource] }

    var isEmpty: Bool { tokens.isEmpty }

    /// Stores `token` for `resource`, dropping the token obtained longest ago when the set is full.
    mutating func store(_ token: ResourceToken, for resource: String) {
        if tokens[resource] == nil, tokens.count >= Self.maximumCount,
            let oldest = tokens.min(by: { $0.value.obtainedAt < $1.value.obtainedAt })?.key
        {
            tokens[oldest] = nil
        }
        tokens[resource] = token
    }

    /// This set without the tokens `shouldRemove` picks.
    func removing(where shouldRemove: (ResourceToken) -> Bool) -> ResourceTokenSet {
        var set = self
        set.tokens = tokens.filter { !shouldRemove($0.value) }
        return set
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let keys = container.allKeys
        guard keys.count <= Self.maximumCount else {
            throw DecodingError.dataCorruptedError(
                forKey: keys[0], in: container, debugDescription: "more than \(Self.maximumCount) resource tokens")
        }
        for key in keys {
            // Tokens are stored only under indicators (canonical URIs): any other key was not
            // written by this library, is never looked up, and is printed by `auth status`.
            guard ResourceURI.isIndicator(key.stringValue) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a resource indicator")
            }
            let token = try container.decode(ResourceToken.self, forKey: key)
            guard token.accessToken.utf8.count <= Self.maximumTokenLength else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "resource token too long")
            }
            tokens[key.stringValue] = token
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (resource, token) in tokens { try container.encode(token, forKey: Key(stringValue: resource)) }
    }
}
