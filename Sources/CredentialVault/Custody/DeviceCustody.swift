#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Who keeps the secret that, together with the host secret and the machine id, makes this
/// machine's device key (device-only records, device-key vaults) and a vault's rollback counter.
///
/// Recorded in a vault's authenticated header and never silently downgraded: a
/// vault made with TPM custody does not open with the host-secret file alone.
public enum DeviceCustody: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The host-secret file only (`$XDG_STATE_HOME/credential-vault/host-secret` and the machine
    /// id): the zero-configuration default and the weakest. A backup of `$HOME` plus the
    /// world-readable machine id opens every device-only credential.
    case file = 0
    /// The login keyring (Secret Service) holds a random device secret: a backup of `$HOME`
    /// also needs the login password.
    case keyring = 1
    /// This machine's TPM 2.0 holds a sealed device secret: a backup of `$HOME` without this
    /// TPM opens nothing device-only.
    case tpm = 2
    /// The XDG Secret portal (a Flatpak or Snap sandbox): the device secret is derived from the
    /// 64 bytes the portal keeps for this application in the login keyring, so a backup of
    /// `$HOME` also needs the login password. Rollback counters are files, as under `file`
    /// (the portal keeps nothing else): as weak against whoever can write the user's files.
    case portal = 3

    /// `file`, `keyring`, `tpm` or `portal`: the CLI's `--custody` values.
    public var name: String {
        switch self {
        case .file: "file"
        case .keyring: "keyring"
        case .tpm: "tpm"
        case .portal: "portal"
        }
    }

    /// The custody named `name` (`file`, `keyring`, `tpm`, `portal`), or `nil`.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// What `credvault info` prints: the custodian and how strong it is.
    public var description: String {
        switch self {
        case .file: "host-secret file (weakest: a copy of $HOME and the machine id opens device-only credentials)"
        case .keyring: "login keyring (a copy of $HOME also needs the login password)"
        case .tpm: "TPM 2.0 (a copy of $HOME without this machine's TPM opens nothing device-only)"
        case .portal:
            "Secret portal (the device key needs this app's secret in the login keyring; the rollback counter is a file, as weak as the host-secret file's)"
        }
    }
}
