/// Which program serves the Secret Service (`org.freedesktop.secrets`), as far as the backend
/// can tell: the messages name it, and the backend works around what each one does its own way
/// (see docs/PROVIDERS.md, and docs/SECRET-SERVICE.md, *Secret Service providers*).
///
/// Found when the store connects, from the other names the provider's connection owns on the
/// bus (`org.gnome.keyring`, `org.kde.kwalletd5` or `org.kde.kwalletd6`,
/// `org.keepassxc.KeePassXC.MainWindow`); `.other` when none of them.
public enum SecretServiceProvider: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// GNOME Keyring (`gnome-keyring-daemon`).
    case gnomeKeyring = "gnome-keyring"
    /// KDE's KWallet (`kwalletd5`/`kwalletd6`, which serves the Secret Service API itself).
    case kwallet = "KWallet"
    /// KeePassXC with its Secret Service integration enabled.
    case keePassXC = "KeePassXC"
    /// Another program, or one that could not be identified.
    case other = "the Secret Service provider"

    /// The provider's name for messages ("KeePassXC"; "the Secret Service provider" for `.other`).
    public var description: String { rawValue }

    /// What a person does to unlock this provider's default collection, for messages: for
    /// example "unlock the database in KeePassXC".
    public var unlockAdvice: String {
        switch self {
        case .gnomeKeyring: "log in to the desktop session, or unlock the login keyring with seahorse"
        case .kwallet: "log in to the Plasma session, or open the wallet with KWalletManager"
        case .keePassXC: "unlock the database in KeePassXC"
        case .other: "unlock the keyring in the desktop session"
        }
    }

    /// The well-known bus names by which each provider is recognised.
    static let markers: [(name: String, provider: SecretServiceProvider)] = [
        ("org.gnome.keyring", .gnomeKeyring),
        ("org.kde.kwalletd5", .kwallet),
        ("org.kde.kwalletd6", .kwallet),
        ("org.keepassxc.KeePassXC.MainWindow", .keePassXC),
    ]
}
