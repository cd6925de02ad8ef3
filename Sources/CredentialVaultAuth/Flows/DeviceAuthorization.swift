import Foundation

/// A started device authorization (RFC 8628): show `userCode` and `verificationURI` to the
/// user (on another device), then call `OIDCClient.completeDeviceAuthorization(_:)`.
public struct DeviceAuthorization: Sendable, CustomStringConvertible {
    /// The code the user types at the verification page.
    public let userCode: String
    /// Where the user goes.
    public let verificationURI: URL
    /// The verification page with the code filled in, if the provider offers it (for a QR code).
    public let verificationURIComplete: URL?
    /// When the device code expires.
    public let expiresAt: Date
    /// The polling interval the provider asked for (5 s when it did not say).
    public let interval: Duration
    /// The device code (a secret: never shown).
    let deviceCode: String
    /// Whether the requested scopes include `openid` (then an ID token is required).
    let requestsOpenID: Bool
    /// The DPoP key (PKCS#8 PEM) the device code is bound to (`dpop_jkt`), `nil` without DPoP.
    var dpopKey: String? = nil

    /// The user code, the page and the expiry; never the device code.
    public var description: String {
        "DeviceAuthorization(userCode: \(userCode), verificationURI: \(verificationURI), expiresAt: \(expiresAt))"
    }
}

/// The device authorization endpoint's answer (RFC 8628 §3.2). Decoding range-checks the
/// numbers (`AuthError.invalidResponse` when nonsense): `expires_in` must be a positive
/// lifetime (clamped to an hour), `interval` a non-negative one (clamped to 1 s ... 5 min,
/// 5 s when absent).
struct DeviceAuthorizationResponse: Decodable {
    var deviceCode: String
    var userCode: String
    var verificationURI: String?
    var verificationURL: String?  // some providers (Google) use this older name
    var verificationURIComplete: String?
    var expiresIn: TimeInterval
    var interval: Duration

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        deviceCode = try container.decode(String.self, forKey: .deviceCode)
        userCode = try container.decode(String.self, forKey: .userCode)
        verificationURI = try container.decodeIfPresent(String.self, forKey: .verificationURI)
        verificationURL = try container.decodeIfPresent(String.self, forKey: .verificationURL)
        verificationURIComplete = try container.decodeIfPresent(String.self, forKey: .verificationURIComplete)
        guard let lifetime = try ServerNumber.decode(CodingKeys.expiresIn, in: container) else {
            throw AuthError.invalidResponse("the device authorization response has no expires_in")
        }
        expiresIn = try ServerNumber.lifetime(lifetime, field: "expires_in", maximum: ServerNumber.maximumDeviceCodeLifetime)
        guard expiresIn > 0 else { throw AuthError.invalidResponse("the device code expires at once") }
        interval = try ServerNumber.interval(try ServerNumber.decode(CodingKeys.interval, in: container) ?? 5, field: "interval")
    }

    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURL = "verification_url"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
    }
}
