#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps a device secret and per-vault rollback counters outside the vault file. The sealed
/// file asks it for both; the custodians are `HostFileCustodian` (this library), the login
/// keyring's (`CredentialVaultSecretService`) and the TPM's (`CredentialVaultTPM`).
///
/// Calls block (a file, a D-Bus call, a TPM command): the sealed file makes them on threads it
/// owns, never on Swift's cooperative pool. Every wait a custodian makes has a deadline.
public protocol DeviceCustodian: Sendable {
    /// The custody this custodian gives; recorded in the vaults made with it.
    var custody: DeviceCustody { get }

    /// This user's 32-byte device secret, made (and kept) when `create` is true and none exists.
    ///
    /// `binding` is a key derived from the host secret: a custodian that can require a secret
    /// to release its own (the TPM's object authValue) requires this one, so that another local
    /// user who reaches the custodian but cannot read the user's host secret gets nothing.
    ///
    /// Errors: `notAvailable` (no such custodian here: no TPM, no keyring; the TPM no longer
    /// holds the key the secret was sealed under: cleared, or another machine's TPM), `locked`
    /// (the keyring is locked), `permissionDenied` (other PCR values, another binding),
    /// `timedOut`, `io`; with `create` false and no secret: `notAvailable` saying so.
    func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes

    /// Makes a new rollback counter for the vault `vaultID` and returns where it is (`reference`,
    /// recorded in the vault, opaque to it: a TPM NV index, a fresh random name for the others)
    /// and its value now. Never an earlier counter of the same vault under its old reference:
    /// a copy that names an earlier counter must find it gone (or ahead of it), not matched
    /// again by a new counter that restarted.
    func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter

    /// The value of the counter `reference` of the vault `vaultID`; `nil` when it does not exist.
    func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64?

    /// Adds one to the counter. Counters never go back (a TPM refuses to; the others are
    /// written durably before this returns).
    func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError)

    /// Removes the counter (a vault moved to another custodian, or deleted); no error when absent.
    func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError)

    /// The reference of a rollback counter this custodian holds for the vault `vaultID`, found
    /// from the id alone, without the vault file or the user's state files (`nil`: none).
    ///
    /// Why: a copy of the vault from before it moved to this custodian names another custodian
    /// (or none), and everything that other custodian keeps can be put back by whoever writes
    /// the user's files. Only a custodian whose state they cannot roll back (the TPM) answers;
    /// the default is `nil`. A custodian that cannot be reached at all (no TPM here) answers
    /// `nil`: no counter of this user's can be there; one that is reached and fails throws.
    func anchoredCounter(vaultID: [UInt8]) throws(CredentialVaultError) -> UInt32?

    /// Whether `anchoredCounter` can ever answer (the TPM's): the others are not asked, and a
    /// sealed file configured with none of those keeps its shortcut for reading a changed file.
    var anchorsCounters: Bool { get }
}

extension DeviceCustodian {
    /// None: this custodian's state is the user's to put back (see the requirement).
    public func anchoredCounter(vaultID: [UInt8]) throws(CredentialVaultError) -> UInt32? { nil }

    /// `false`: see `anchoredCounter`.
    public var anchorsCounters: Bool { false }
}

/// Where a vault's rollback counter is and its value when it was made or read.
public struct RollbackCounter: Sendable, Hashable {
    /// The custodian's name for the counter (a TPM NV index; a random nonzero name for the
    /// keyring and the file). Never 0.
    public var reference: UInt32
    /// Its value.
    public var value: UInt64

    /// A counter `reference` at `value`.
    public init(reference: UInt32, value: UInt64) {
        self.reference = reference
        self.value = value
    }
}
