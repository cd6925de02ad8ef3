import CredentialVault
import Foundation

/// A secret a registration endpoint hands out (`client_secret`, `registration_access_token`),
/// held in guarded memory (`SecureBytes`) and never shown: `description` is redacted, so it
/// cannot reach a log, an error or a test failure message by accident.
public struct RegistrationSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    private let bytes: SecureBytes

    /// Copies `value` into guarded memory.
    public init(_ value: String) {
        bytes = SecureBytes(copying: Array(value.utf8))
    }

    /// The secret's text, for the one request that needs it (a token request, a management
    /// call). Do not keep, log or pass it on a command line.
    public func reveal() -> String {
        bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Redacted: never shows the secret.
    public var description: String { "RegistrationSecret(redacted)" }
    /// Redacted: never shows the secret.
    public var debugDescription: String { description }

    /// Constant-time comparison.
    public static func == (lhs: RegistrationSecret, rhs: RegistrationSecret) -> Bool {
        lhs.bytes.constantTimeEquals(rhs.bytes)
    }

    /// Hashes the length only (the bytes are secret; equal secrets have equal lengths).
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes.count) }
}
