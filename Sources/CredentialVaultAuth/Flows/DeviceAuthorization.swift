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

    /// The user code, the page and the expiry; never the device code.
    public var description: String {
        "DeviceAuthorization(userCode: \(userCode), verificationURI: \(verificationURI), expiresAt: \(expiresAt))"
    }
}

/// The device authorization endpoint's answer (RFC 8628 §3.2).
struct DeviceAuthorizationResponse: Decodable {
    var deviceCode: String
    var userCode: String
    var verificationURI: String?
    var verificationURL: String?  // some providers (Google) use this older name
    var verificationURIComplete: String?
    var expiresIn: Double
    var interval: Double?

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
