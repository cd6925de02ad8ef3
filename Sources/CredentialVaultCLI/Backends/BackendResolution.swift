import CredentialVault

/// A concrete backend.
package enum VaultBackend: String, Sendable, Hashable, CustomStringConvertible {
    /// The Secret Service (only in `credvault-full`).
    case secretService = "secret-service"
    /// The sealed file.
    case file
    /// Process memory: nothing survives the process.
    case memory
    /// The fleet store in PostgreSQL (only in `credvault-full`).
    case postgres
    /// libsecret's keyring file, shared with libsecret and oo7 (only in `credvault-full`).
    case libsecretFile = "libsecret-file"

    /// The name as `--backend` takes it.
    package var description: String { rawValue }
}

/// Which backend a name means here, and why (`credvault info` shows why for `auto`).
package struct BackendResolution: Sendable, Hashable {
    /// The backend.
    package var kind: VaultBackend
    /// Why, in words ("chosen explicitly", or what the Secret Service answered for `auto`).
    package var reason: String
    /// `auto` found the Secret Service with its keyring locked (`kind` is then
    /// `.secretService`, and `reason` says how to go on): commands stop with exit code 10.
    package var isLocked: Bool
    /// The custody a new sealed file gets unless `--custody` names one (`auto` inside a
    /// sandbox: `.portal`); `nil`: `--custody`, else the host-secret file.
    package var custody: DeviceCustody?
    /// For `libsecret-file`: the keyring file and where its key comes from, in words.
    package var keyringFile: (path: String, key: String)? {
        get { keyringFilePath.map { ($0, keyringFileKey ?? "") } }
        set {
            keyringFilePath = newValue?.path
            keyringFileKey = newValue?.key
        }
    }
    private var keyringFilePath: String?
    private var keyringFileKey: String?

    /// Creates a resolution.
    package init(
        kind: VaultBackend, reason: String, isLocked: Bool = false, custody: DeviceCustody? = nil, keyringFile: (path: String, key: String)? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.isLocked = isLocked
        self.custody = custody
        keyringFilePath = keyringFile?.path
        keyringFileKey = keyringFile?.key
    }
}

/// `--backend auto` found the keyring locked: exit code 10 (`locked`), with `message` (how to
/// unlock, or to choose the file) as the one line on stderr.
package struct LockedKeyringError: Error, Sendable {
    /// What happened and what to do.
    package let message: String

    /// Creates the error.
    package init(message: String) { self.message = message }
}
