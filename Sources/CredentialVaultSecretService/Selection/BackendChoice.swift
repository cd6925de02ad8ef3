/// The backend a program asks for (`--backend` of `credvault`, `CREDVAULT_BACKEND`).
public enum BackendChoice: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The Secret Service when it is reachable, the sealed file with the device key when it is
    /// unavailable; a locked keyring follows `BackendResolver.lockedKeyring` (reported by
    /// default, never silently replaced). `CREDVAULT_BACKEND` overrides this choice.
    case automatic = "auto"
    /// The Secret Service (GNOME Keyring, KeePassXC, ...), whatever its state.
    case secretService = "secret-service"
    /// The sealed file.
    case file
    /// Process memory only: nothing survives the process.
    case memory
    /// The credentials systemd passed to this service (`$CREDENTIALS_DIRECTORY`), read-only:
    /// `SystemdCredentialStore`. `.automatic` picks it only when the app asks
    /// (`BackendResolver.prefersSystemdCredentials`) and the variable is set.
    case systemdCredentials = "systemd-credentials"
    /// libsecret's keyring file (`LibsecretFileStore`), shared with the app's GTK or Rust
    /// components and with libsecret itself: inside a sandbox keyed by the Secret portal's
    /// secret, outside one only with `BackendResolver.libsecretFilePassword`. Opt-in:
    /// `.automatic` picks it only inside a sandbox and only when the app asks
    /// (`BackendResolver.prefersLibsecretFileInSandbox`).
    case libsecretFile = "libsecret-file"

    /// The environment variable that overrides `.automatic`.
    public static let environmentVariable = "CREDVAULT_BACKEND"

    /// Parses a backend name: `auto` (or `automatic`), `secret-service`, `file`, `memory`,
    /// `systemd-credentials`, `libsecret-file`.
    public init?(name: String) {
        if name == "automatic" {
            self = .automatic
        } else if let choice = BackendChoice(rawValue: name) {
            self = choice
        } else {
            return nil
        }
    }

    /// The name as `--backend` takes it.
    public var description: String { rawValue }
}

/// A concrete backend (what `.automatic` resolves to). There is no plaintext backend.
public enum BackendKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `SecretServiceStore`.
    case secretService = "secret-service"
    /// `SealedFileStore`.
    case file
    /// `InMemoryStore`.
    case memory
    /// `SystemdCredentialStore` (read-only).
    case systemdCredentials = "systemd-credentials"
    /// `LibsecretFileStore` (libsecret's `keyrings/default.keyring`).
    case libsecretFile = "libsecret-file"

    /// The name as `--backend` takes it.
    public var description: String { rawValue }
}
