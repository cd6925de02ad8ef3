import CredentialVault

/// The secret a libsecret keyring file's key is derived from (PBKDF2-HMAC-SHA256 with the
/// file's salt): libsecret uses the bytes as they are, whichever source they come from.
public enum LibsecretKeySource: Sendable, CustomStringConvertible {
    /// The 64 bytes the Secret portal (`org.freedesktop.portal.Secret.RetrieveSecret`) hands a
    /// sandboxed application: what libsecret uses inside a Flatpak or Snap. Exactly 64 bytes.
    case portalSecret(SecureBytes)
    /// A password: libsecret's `SECRET_FILE_TEST_PASSWORD` (its bytes, without a terminating
    /// NUL), or any secret an application keeps elsewhere. Not empty.
    case password(SecureBytes)

    /// The portal's secret size, which libsecret demands of the portal.
    public static let portalSecretSize = 64

    /// The bytes the key is derived from.
    var secret: SecureBytes {
        switch self {
        case .portalSecret(let bytes), .password(let bytes): bytes
        }
    }

    /// Throws `invalidArgument` for a portal secret that is not 64 bytes or an empty password.
    func validate() throws(CredentialVaultError) {
        switch self {
        case .portalSecret(let bytes) where bytes.count != Self.portalSecretSize:
            throw .invalidArgument("the Secret portal's secret is \(Self.portalSecretSize) bytes, not \(bytes.count)")
        case .password(let bytes) where bytes.count == 0:
            throw .invalidArgument("the keyring file's password must not be empty")
        default: return
        }
    }

    /// Names the source, never its bytes.
    public var description: String {
        switch self {
        case .portalSecret: "the Secret portal's secret (redacted)"
        case .password: "a password (redacted)"
        }
    }
}
