import CredentialVault
import Foundation

/// The login keyring as custodian (the desktop case): the Secret Service holds a random 32-byte
/// device secret and each vault's rollback counter, as items of this library's own namespace
/// (`org.credential-vault.custody`: other applications' stores and `credvault list` do not see
/// them). The device key then needs both the host secret and this secret, so a backup of
/// `$HOME` also needs the login password (the keyring file is encrypted with it).
///
/// What it does not defend against: any process of the same user on the session bus can read
/// the items (the Secret Service has no per-application access control), and offline guessing
/// of the login password from a backup. Its counters survive daemon restarts (they are items of
/// the login keyring, on disk); a keyring restored from a backup restores them too.
///
/// Errors are the Secret Service's: `locked` (the keyring is locked: unlock it and retry),
/// `notAvailable` (no Secret Service, or the secret was removed), `timedOut`.
public struct KeyringCustodian: DeviceCustodian {
    /// The namespace of the custody items.
    public static let application = try! ApplicationIdentifier("org.credential-vault.custody")
    static let service = "credential-vault custody"
    static let secretKey = CredentialKey(service: service, account: "device-secret", label: "CredentialVault device secret")

    let store: SecretServiceStore

    /// A custodian talking to the Secret Service with `timeout` per operation.
    public init(timeout: Duration = .seconds(5)) {
        store = SecretServiceStore(configuration: SecretServiceConfiguration(application: Self.application, timeout: timeout))
    }

    /// The login keyring.
    public var custody: DeviceCustody { .keyring }

    /// The keyring's device secret, made when `create` and missing (atomically: see
    /// `loadOrCreate`). A missing one when it may not be made is `notAvailable`, saying what is lost.
    public func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        var value: Data
        if create {
            value = try store.loadOrCreate(Self.secretKey) { SecureBytes.random(count: 32).withUnsafeBytes { Data($0) } }
        } else {
            guard let found = try store.load(Self.secretKey) else {
                throw .notAvailable(
                    "the login keyring holds no CredentialVault device secret (it was removed, or this is another keyring): the device-only credentials and device-key vaults kept under keyring custody cannot be opened; restore the keyring (~/.local/share/keyrings) from a backup")
            }
            value = found
        }
        defer { value.resetBytes(in: 0..<value.count) }
        guard value.count == 32 else { throw .io("the login keyring's CredentialVault device secret is damaged (\(value.count) bytes, not 32)") }
        return value.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// Makes the vault's counter at 0 (an existing one keeps its value: counters never go back).
    public func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        let text = try store.loadOrCreate(Self.counterKey(vaultID)) { Data("0".utf8) }
        return RollbackCounter(reference: 0, value: try Self.parse(text))
    }

    /// The counter's value, `nil` when the keyring has none for this vault.
    public func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        guard let text = try store.load(Self.counterKey(vaultID)) else { return nil }
        return try Self.parse(text)
    }

    /// Adds one (the vault's writers hold its lock, so read-then-write cannot interleave).
    public func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        guard let value = try readCounter(vaultID: vaultID, reference: reference, binding: binding) else {
            throw .notAvailable("the login keyring has no rollback counter for this vault")
        }
        guard value < UInt64.max else { throw .invalidArgument("the rollback counter is at its maximum") }
        try store.save(Data(String(value + 1).utf8), for: Self.counterKey(vaultID), options: .portable)
    }

    /// Removes the counter's item.
    public func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        _ = try store.delete(Self.counterKey(vaultID))
    }

    static func counterKey(_ vaultID: [UInt8]) -> CredentialKey {
        CredentialKey(service: service, account: "rollback-counter:" + HostFileCustodian.name(vaultID), label: "CredentialVault rollback counter")
    }

    /// A counter's decimal text; anything else is damage, never read as 0.
    static func parse(_ text: Data) throws(CredentialVaultError) -> UInt64 {
        guard text.count <= 20, let string = String(data: text, encoding: .utf8), let value = UInt64(string) else {
            throw .io("a rollback counter in the login keyring is damaged")
        }
        return value
    }
}
