import CredentialVault
import CredentialVaultSecretService

/// The Secret Service part of `credvault info`.
enum SecretServiceInfo {
    /// Adds the Secret Service's state, collection and capabilities to `info`; returns the exit
    /// code (`notAvailable`, `busy` for a time-out, when it cannot be asked). Never prompts.
    static func append(to info: inout [(String, String)]) -> Int32 {
        let store = SecretServiceStore()
        var code = ExitCode.success
        do {
            let status = try store.status()
            info.append(("state", status.isLocked ? "locked (unlock the keyring in the desktop session, e.g. with seahorse)" : "unlocked"))
            info.append((
                "stores in",
                "Secret Service collection \"\(status.collectionLabel)\" (\(status.collectionPath)); ephemeral credentials in the session collection"
            ))
            if !status.isLocked { info.append(("credentials", String(try store.listKeys().count))) }
        } catch {
            info.append(("state", "not available: \(error)"))
            code = ExitCode.of(error)
        }
        info.append(("capabilities", store.capabilities.description))
        return code
    }
}
