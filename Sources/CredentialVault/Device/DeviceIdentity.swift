#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What makes this machine this machine, for device-only credentials: a random host secret kept
/// in a 0600 file outside any vault, and the systemd machine id.
///
/// The device key is derived from both (keyed BLAKE2b), so a vault file copied to another host
/// lacks the host secret and fails to open its device-only records, and a copied host secret
/// alone does not help on a machine with another machine id. Tests inject an identity to play
/// "another machine".
public struct DeviceIdentity: Sendable, Hashable {
    /// The file holding the 32-byte host secret; created (0600, in a 0700 directory) on first use,
    /// never again once a credential depends on it.
    public var hostSecretURL: URL
    /// The machine id (`/etc/machine-id`).
    public var machineID: String

    /// An explicit identity (tests, containers with their own machine id).
    public init(hostSecretURL: URL, machineID: String) {
        self.hostSecretURL = hostSecretURL
        self.machineID = machineID
    }

    /// This machine: the host secret under `$XDG_STATE_HOME/credential-vault/host-secret`
    /// (default `~/.local/state/...`), or `/var/lib/credential-vault/host-secret` with
    /// `systemService: true`; the machine id from `/etc/machine-id` (or `/var/lib/dbus/machine-id`).
    /// Throws `notAvailable` when no machine id exists: device binding is never silently weakened.
    public static func current(systemService: Bool = false) throws(CredentialVaultError) -> DeviceIdentity {
        let secret = defaultHostSecretURL(systemService: systemService)
        for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                let id = PlainText.trimmed(text)
                if !id.isEmpty { return DeviceIdentity(hostSecretURL: secret, machineID: id) }
            }
        }
        throw .notAvailable("no /etc/machine-id: device-only credentials need a machine id")
    }

    /// Where `current(systemService:)` keeps the host secret (and, beside it, the custody
    /// state): the user's state directory, or /var/lib for a system service.
    package static func defaultHostSecretURL(systemService: Bool) -> URL {
        systemService
            ? URL(fileURLWithPath: "/var/lib/credential-vault/host-secret")
            : XDGDirectories.state.appendingPathComponent("credential-vault/host-secret")
    }

    /// The device master key: BLAKE2b keyed with the host secret over a label and the machine id.
    /// Creates the host secret on first use, but only when `need()` says that nothing depends on
    /// an older one: a missing secret that device-only records or a device-key vault need is an
    /// error saying so (`HostSecret`).
    func masterKey(need: () -> HostSecret.Need) throws(CredentialVaultError) -> SecureBytes {
        let secret = try HostSecret.loadOrCreate(at: hostSecretURL, need: need)
        var message = Array("CredentialVault device key v1\u{0}".utf8)
        message.append(contentsOf: machineID.utf8)
        return message.withUnsafeBytes { Crypto.keyedHashKey(key: secret, [$0]) }
    }

    /// The device master key under a keyring or TPM custodian: BLAKE2b keyed with the host
    /// secret over a label, the custody, the custodian's secret and the machine id. Both
    /// secrets are needed: a copy of `$HOME` lacks the custodian's, another local user lacks the
    /// host secret (and so the binding the custodian wants before it releases its own).
    /// `release` gets the binding and returns the custodian's secret; the host secret is read once.
    func masterKey(
        custody: DeviceCustody, need: () -> HostSecret.Need, release: (SecureBytes) throws(CredentialVaultError) -> SecureBytes
    ) throws(CredentialVaultError) -> SecureBytes {
        let secret = try HostSecret.loadOrCreate(at: hostSecretURL, need: need)
        let held = try release(binding(secret))
        var label = Array("CredentialVault device key v2\u{0}".utf8)
        label.append(custody.rawValue)
        let machine = Array(machineID.utf8)
        return label.withUnsafeBytes { l in
            held.withUnsafeBytes { h in machine.withUnsafeBytes { m in Crypto.keyedHashKey(key: secret, [l, h, m]) } }
        }
    }

    /// A 32-byte key of this device for the purpose named by `context` (an 8-byte `crypto_kdf`
    /// context): a subkey (id 1) of the device master key, under `custodian` (its device secret
    /// needed too: the login keyring's, the TPM's) or, without one, the host-secret file
    /// custody. The host secret (and the custodian's secret) are made on first use, unless a
    /// fingerprint file says a host secret existed here before (`HostSecret`): a key derived from
    /// a lost secret is never silently replaced by another.
    package func deviceKey(custodian: (any DeviceCustodian)?, context: StaticString) throws(CredentialVaultError) -> SecureBytes {
        let master: SecureBytes
        if let custodian, custodian.custody != .file {
            master = try masterKey(custody: custodian.custody, need: { .none }) { (binding) throws(CredentialVaultError) in
                try custodian.deviceSecret(binding: binding, create: true)
            }
        } else {
            master = try masterKey(need: { .none })
        }
        return Crypto.subkey(of: master, id: 1, context: context)
    }

    /// What a custodian asks for before it releases its secret or touches a counter (the TPM
    /// object's authValue): a hash keyed with the host secret, so only who can read the host
    /// secret gets it.
    func custodianBinding(need: () -> HostSecret.Need) throws(CredentialVaultError) -> SecureBytes {
        binding(try HostSecret.loadOrCreate(at: hostSecretURL, need: need))
    }

    private func binding(_ secret: SecureBytes) -> SecureBytes {
        var message = Array("CredentialVault custodian binding v1\u{0}".utf8)
        message.append(contentsOf: machineID.utf8)
        return message.withUnsafeBytes { Crypto.keyedHashKey(key: secret, [$0]) }
    }
}

/// The XDG base directories, with their documented defaults.
package enum XDGDirectories {
    package static var data: URL { directory("XDG_DATA_HOME", default: ".local/share") }
    package static var state: URL { directory("XDG_STATE_HOME", default: ".local/state") }

    private static func directory(_ variable: String, default relative: String) -> URL {
        if let value = ProcessInfo.processInfo.environment[variable], value.hasPrefix("/") {
            return URL(fileURLWithPath: value)
        }
        return URL(fileURLWithPath: home).appendingPathComponent(relative)
    }

    /// The home directory the defaults are under: `$HOME`, else the password database's, else
    /// `/`; without trailing slashes.
    static var home: String {
        var path = ProcessInfo.processInfo.environment["HOME"] ?? passwordHome() ?? "/"
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// The home directory when `path` is one of the default directories under it (or below
    /// one: `~/.local/...`) and it does not exist. A service user's `$HOME` often names none
    /// (`/nonexistent`): the library never creates a home directory for its defaults, which as
    /// root would make that path anywhere. A path named explicitly (an XDG variable, a vault
    /// path) is made as asked.
    static func missingHome(under path: String) -> String? {
        let home = home
        let defaults = (home == "/" ? "" : home) + "/.local/"
        guard path.hasPrefix(defaults) || path + "/" == defaults, access(home, F_OK) != 0 else { return nil }
        return home
    }

    /// The user's home directory from the password database (what `NSHomeDirectory()` falls
    /// back to without `$HOME`), read with the re-entrant call into a bounded buffer.
    private static func passwordHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else {
            return nil
        }
        let path = String(cString: directory)
        return path.hasPrefix("/") ? path : nil
    }
}
