#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The custodians a configuration offers, and the keys derived through them.
extension SealedFileConfiguration {
    /// The custodian for `custody`: one of `custodians`, or for `.file` the host-secret file's
    /// (beside the host secret). Throws `notAvailable` when a vault needs a custodian this
    /// configuration does not offer: a vault made with TPM custody never opens with the file alone.
    func custodian(for custody: DeviceCustody) throws(CredentialVaultError) -> any DeviceCustodian {
        if let match = custodians.first(where: { $0.custody == custody }) { return match }
        guard custody == .file else {
            throw .notAvailable(
                "this vault's device key and rollback counter are held by the \(custody.name) custodian, which was not configured (SealedFileConfiguration.custodians; credvault: --custody \(custody.name))")
        }
        return HostFileCustodian(directory: try resolvedDevice().hostSecretURL.deletingLastPathComponent())
    }

    /// Whether a new vault gets a rollback counter: as asked, else with keyring and TPM custody.
    var makesRollbackCounter: Bool { rollbackCounter ?? (custody != .file) }

    /// The device master key under `custody`: for `.file` the host secret and the machine id
    /// (unchanged since format 1), otherwise also the custodian's device secret, which it
    /// releases only against the binding (`DeviceIdentity.custodianBinding`).
    func masterKey(custody: DeviceCustody, need: () -> HostSecret.Need) throws(CredentialVaultError) -> SecureBytes {
        let device = try resolvedDevice()
        guard custody != .file else { return try device.masterKey(need: need) }
        let custodian = try custodian(for: custody)
        let canCreate = if case .none = need() { true } else { false }
        return try device.masterKey(custody: custody, need: need) { (binding) throws(CredentialVaultError) in
            try custodian.deviceSecret(binding: binding, create: canCreate)
        }
    }

    /// The rollback guard of the vault `vaultID` under `custody`.
    func rollbackGuard(custody: DeviceCustody, vaultID: [UInt8], need: () -> HostSecret.Need) throws(CredentialVaultError) -> RollbackGuard {
        let custodian = try custodian(for: custody)
        return RollbackGuard(custodian: custodian, vaultID: vaultID, binding: try resolvedDevice().custodianBinding(need: need))
    }

    /// The directory of this machine's custody state (the host secret's). Found without the
    /// machine id: a machine that has none (or lost it) still finds the marks made there.
    private var custodyStateDirectory: URL {
        (device?.hostSecretURL ?? DeviceIdentity.defaultHostSecretURL(systemService: false)).deletingLastPathComponent()
    }

    /// Records (or, `false`, forgets) that the vault `vaultID` has a rollback counter, in the
    /// host state directory (`counters/<vault id>.protected`): a copy of it from before it had
    /// one, which no counter can refuse, is then refused too (`protectionMark`).
    func markRollbackProtected(_ vaultID: [UInt8], _ protected: Bool) throws(CredentialVaultError) {
        try HostFileCustodian(directory: custodyStateDirectory).mark(vaultID, protected: protected)
    }

    /// Whether the vault `vaultID` is recorded as having a rollback counter (`markRollbackProtected`).
    /// Throws when that cannot be known (see `HostFileCustodian.isMarked`): a vault without a
    /// counter is then not opened, rather than opened as if it had never had one.
    func isMarkedRollbackProtected(_ vaultID: [UInt8]) throws(CredentialVaultError) -> Bool {
        try HostFileCustodian(directory: custodyStateDirectory).isMarked(vaultID)
    }
}
