import CredentialVault

/// The automatic choice inside a Flatpak or Snap sandbox.
///
/// There the Secret Service is out of reach unless the app was given
/// `--talk-name=org.freedesktop.secrets`, and asking it first would fail slowly (or, through a
/// filtering proxy, time out), so `.automatic` does not ask it: the choice is the sealed file
/// under portal custody (the device key needs the app's secret from the XDG Secret portal).
/// Why the sealed file and not libsecret's own file (`~/.var/app/<id>/data/keyrings/`, the
/// same portal secret): the sealed file keeps its locking between processes, atomic commits,
/// AEAD with separate keys and its rollback check; libsecret's file has one key for AES and
/// HMAC, attribute names in the clear and no lock.
extension BackendResolver {
    /// The automatic decision inside `sandbox`, when the resolver is in one and nothing else
    /// (an explicit choice, `CREDVAULT_BACKEND`, systemd's credentials) decided first.
    func sandboxDecision() -> BackendDecision? {
        guard let sandbox else { return nil }
        // libsecret's file (shared with GTK and Rust components of the same app) only when the
        // app asks: its key is the portal's secret as well, but the format is the weaker one.
        if prefersLibsecretFileInSandbox, let target = libsecretFileTarget() {
            return BackendDecision(kind: .libsecretFile, reason: "inside \(sandbox), as the app asks: libsecret's keyring file", libsecretFile: target)
        }
        return BackendDecision(
            kind: .file, reason: "inside \(sandbox): sealed file, device key from the Secret portal", custody: .portal)
    }

    /// `sealedFileConfiguration` for `decision`: with the portal's custody when the decision
    /// asks for it (a new vault is made under it; an existing one keeps its own), and the
    /// portal's custodian offered whenever the resolver is in a sandbox, so that a vault made
    /// under portal custody opens.
    func sealedFileConfiguration(for decision: BackendDecision) -> SealedFileConfiguration {
        var configuration = sealedFileConfiguration
        if let custody = decision.custody { configuration.custody = custody }
        if sandbox != nil, !configuration.custodians.contains(where: { $0.custody == .portal }) {
            // Its counters beside the host secret the configuration names (the default's otherwise).
            configuration.custodians.append(PortalCustodian(portal: portal, directory: configuration.device?.hostSecretURL.deletingLastPathComponent()))
        }
        return configuration
    }
}
