import CredentialVault
import CredentialVaultSecretService

/// `portal-backend:APP_ID`: asks the Secret portal's backend on this bus directly
/// (`PortalSecretBackend`) for the secret of APP_ID. Prints `secret:<n>`, where n numbers the
/// distinct secrets this run saw in order (the same n: the same 64 bytes), never a byte of one.
enum PortalSteps {
    nonisolated(unsafe) private static var seen: [SecureBytes] = []

    static func run(_ parts: [String], timeout: Duration) throws(CredentialVaultError) -> String {
        guard parts.count == 2 else { return "usage:portal-backend:APP_ID" }
        let secret = try PortalSecretBackend(timeout: timeout).retrieveSecret(applicationID: parts[1])
        if let index = seen.firstIndex(where: { $0.constantTimeEquals(secret) }) { return "secret:\(index)" }
        seen.append(secret)
        return "secret:\(seen.count - 1)"
    }
}
