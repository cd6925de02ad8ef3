import CredentialVault
import Foundation

/// The XDG Secret portal as custodian, for an application in a Flatpak or Snap sandbox (which
/// cannot reach the Secret Service itself): the portal gives the application 64 random bytes of
/// its own, which gnome-keyring keeps in the login collection, and the device secret is derived
/// from them (keyed BLAKE2b-256, key the 64 bytes, over the label
/// `"CredentialVault portal device secret v1\0"`, docs/FORMAT.md). libsecret uses the same
/// bytes as the password of its own file's key (PBKDF2-SHA256 with its salt): the label makes
/// this device secret another key, never libsecret's.
///
/// The portal keeps nothing else, so the rollback counters are files beside the host secret,
/// exactly as `HostFileCustodian` keeps them (inside a Flatpak, `$XDG_STATE_HOME` is the app's
/// own `~/.var/app/<id>/.local/state`): the rollback check is as weak as under the host-secret
/// file custody against anyone who can write the user's files.
///
/// The secret is the same on every call for one application, and the portal makes it on the
/// first: there is no "missing" to report, so `create` changes nothing. A keyring that lost it
/// (restored without it, another user account) gives new bytes, and the device key no longer
/// opens what it sealed (`deviceMismatch` for device-only records, `wrongPassphrase` for a
/// device-key vault).
///
/// Errors: `unsupported` (not in a sandbox), `notAvailable` (no Secret portal, or it failed),
/// `locked` (the person did not unlock the keyring), `timedOut`, `io`; the counters' as
/// `HostFileCustodian`'s.
public struct PortalCustodian: DeviceCustodian {
    /// The portal asked for the secret.
    public let portal: SecretPortal
    /// Keeps the rollback counters (files in `directory/counters`).
    let counters: HostFileCustodian

    /// A custodian asking `portal` (this process's sandbox's, by default), with its counters in
    /// `directory/counters` (default: the host secret's directory, `$XDG_STATE_HOME/credential-vault`).
    public init(portal: SecretPortal = SecretPortal(), directory: URL? = nil) {
        self.portal = portal
        counters = HostFileCustodian(
            directory: directory ?? DeviceIdentity.defaultHostSecretURL(systemService: false).deletingLastPathComponent())
    }

    /// `.portal`.
    public var custody: DeviceCustody { .portal }

    /// The label of the derivation (docs/FORMAT.md, custody 3).
    static let label = Array("CredentialVault portal device secret v1\u{0}".utf8)

    /// The device secret derived from the portal's 64 bytes (see the type's comment).
    @available(*, noasync, message: "blocks the calling thread: the sealed file calls it on threads it owns")
    public func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        let portalSecret = try portal.retrieveSecret()
        return Self.deviceSecret(from: portalSecret)
    }

    /// The derivation alone (tests check it against docs/FORMAT.md).
    static func deviceSecret(from portalSecret: SecureBytes) -> SecureBytes {
        label.withUnsafeBytes { Crypto.keyedHashKey(key: portalSecret, [$0]) }
    }

    /// A counter file, as `HostFileCustodian.createCounter`.
    public func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        try counters.createCounter(vaultID: vaultID, binding: binding)
    }

    /// As `HostFileCustodian.readCounter`.
    public func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        try counters.readCounter(vaultID: vaultID, reference: reference, binding: binding)
    }

    /// As `HostFileCustodian.incrementCounter`.
    public func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        try counters.incrementCounter(vaultID: vaultID, reference: reference, binding: binding)
    }

    /// As `HostFileCustodian.removeCounter`.
    public func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        try counters.removeCounter(vaultID: vaultID, reference: reference, binding: binding)
    }
}
