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
    /// alone, otherwise also the custodian's device secret, which it
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

    /// A counter of the vault `vaultID` that a configured custodian other than `custody` (the
    /// vault's own, as this copy says) holds and finds from the id alone
    /// (`DeviceCustodian.anchoredCounter`): then this copy is from before the vault moved to that
    /// custodian (or the move did not finish), whatever the user's state files say.
    /// `movingTo`: the custodian this store is moving the vault to, under the vault lock, whose
    /// new counter is no older copy's.
    func anchoredCounter(
        of vaultID: [UInt8], besides custody: DeviceCustody, movingTo: DeviceCustody? = nil
    ) throws(CredentialVaultError) -> (DeviceCustody, UInt32)? {
        for custodian in custodians where custodian.anchorsCounters && custodian.custody != custody && custodian.custody != movingTo {
            if let reference = try custodian.anchoredCounter(vaultID: vaultID) { return (custodian.custody, reference) }
        }
        return nil
    }

    /// Whether a configured custodian other than `custody` could hold a counter of a vault
    /// under `custody` since a move (`anchoredCounter`): then changes to the file are read whole
    /// and asked about (`SealedFileStore.refresh`).
    func mayHoldCounterElsewhere(than custody: DeviceCustody) -> Bool {
        custodians.contains { $0.anchorsCounters && $0.custody != custody }
    }

    /// Throws `rolledBack` when a configured custodian other than the one `header` names holds
    /// a counter of the vault (`anchoredCounter`): this copy is from before the vault moved
    /// there, or that move did not finish. Asked on every open, and again whenever a store that
    /// is open finds the file replaced (a copy put back under a long-running process).
    func refuseIfAnchoredElsewhere(_ header: VaultHeader, movingTo: DeviceCustody? = nil) throws(CredentialVaultError) {
        guard let (holder, _) = try anchoredCounter(of: header.vaultID, besides: header.custody, movingTo: movingTo) else { return }
        throw .rolledBack(
            "the \(holder.name) custodian holds this vault's rollback counter, and this copy is under \(header.custody.name) custody: it is from before the vault moved to \(holder.name) custody, or that move did not finish; to keep this copy as the vault, accept it (credvault accept-restore)")
    }

    /// Removes every counter `anchoredCounter` finds (each custodian checks it is this vault's
    /// before it removes it); whether there was one.
    func releaseAnchoredCounters(of vaultID: [UInt8], besides custody: DeviceCustody, need: () -> HostSecret.Need) throws(CredentialVaultError) -> Bool {
        var released = false
        // One per custodian in practice; bounded all the same.
        for _ in 0..<16 {
            guard let (holder, reference) = try anchoredCounter(of: vaultID, besides: custody) else { return released }
            let made = try rollbackGuard(custody: holder, vaultID: vaultID, need: need)
            try made.custodian.removeCounter(vaultID: vaultID, reference: reference, binding: made.binding)
            guard try made.custodian.anchoredCounter(vaultID: vaultID) != reference else {
                throw .io("the \(holder.name) custodian's counter of this vault could not be removed; nothing else was changed")
            }
            released = true
        }
        throw .io("a custodian keeps answering with another counter of this vault; nothing else was changed")
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
