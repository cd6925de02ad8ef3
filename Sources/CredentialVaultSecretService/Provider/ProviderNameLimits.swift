import CredentialVault

/// The names a provider cannot store exactly, refused before anything is written.
///
/// KeePassXC (2.7.4) stores every attribute byte for byte, but matches the attributes of a
/// search, and of a replacing `CreateItem`, with an anchored regular expression whose `$` also
/// matches before a final line feed: a search for `x` also finds the item named `x\n`, one for
/// `""` the item named `"\n"`. A save of `""` would thus overwrite the credential `"\n"` (and
/// take its name), and a load of `""` would read it. A name ending in a line feed is therefore
/// refused on KeePassXC: every name this library stores there is then found only by itself.
extension SecretServiceProvider {
    /// `unsupported` when this provider cannot store `key` exactly (see above); `nil` otherwise.
    /// The message names the provider and the name, escaped (never its raw characters).
    func refusal(toStore key: CredentialKey) -> CredentialVaultError? {
        guard self == .keePassXC else { return nil }
        for (what, name) in [("service", key.service), ("account", key.account)] where name.utf8.last == 0x0A {
            return .unsupported(
                "\(self) cannot store the \(what) name \"\(Self.escaped(name))\" exactly: its searches take a name ending "
                    + "in a line feed for the same name without it, so the credential could replace or be read as another; "
                    + "nothing was stored (use another name, or the gnome-keyring, KWallet or file backend)")
        }
        return nil
    }

    /// `name` with printable ASCII kept and every other character as `\u{H}` (a backslash as
    /// `\\`): a message can then neither carry a control character nor be misread.
    static func escaped(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if (0x20...0x7E).contains(scalar.value) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out
    }
}
