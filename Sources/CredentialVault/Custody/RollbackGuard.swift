#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A vault's rollback counter at its custodian, checked against the counter value the vault's
/// commit records carry.
///
/// The protocol (docs/FORMAT.md, *Rollback counter*): a write makes the new state durable with
/// the counter value c + 1, and only then has the custodian increment its counter to c + 1. So
/// after any crash the file carries the custodian's value or one more, and a reader accepts
/// exactly those two; an older value is an older copy of the file put back (`rolledBack`). A
/// write that finds the file one ahead (a crash before the increment) completes that increment
/// first, so the file is never more than one ahead.
struct RollbackGuard: Sendable {
    let custodian: any DeviceCustodian
    let vaultID: [UInt8]
    let binding: SecureBytes

    /// The custodian's counter value, after checking that the file's `stamp` is it or one more.
    @discardableResult
    func verify(_ stamp: RollbackStamp) throws(CredentialVaultError) -> UInt64 {
        let custody = custodian.custody.name
        // Every custodian names its counters with a nonzero reference (docs/FORMAT.md).
        guard stamp.reference != 0 else {
            throw .corrupted("the vault has a rollback counter, but its commit records name no counter (reference 0)")
        }
        guard let value = try custodian.readCounter(vaultID: vaultID, reference: stamp.reference, binding: binding) else {
            throw .rolledBack("its rollback counter is missing from the \(custody) custodian")
        }
        if stamp.value == value || (value < UInt64.max && stamp.value == value + 1) { return value }
        if stamp.value < value {
            throw .rolledBack("the file carries counter \(stamp.value), the \(custody) custodian's counter is at \(value): this is an older copy of the vault")
        }
        throw .rolledBack("the \(custody) custodian's counter (\(value)) is behind the file (\(stamp.value)): the custodian's state was reset or restored")
    }

    /// Before a write: checks the file's `stamp`, completes an increment a crash interrupted,
    /// and returns the stamp the new state carries.
    /// `known` is the custodian's value when the caller read it under the same lock already.
    func next(after stamp: RollbackStamp, known: UInt64? = nil) throws(CredentialVaultError) -> RollbackStamp {
        let value: UInt64
        if let known { value = known } else { value = try verify(stamp) }
        guard stamp.value < UInt64.max - 1 else { throw .invalidArgument("the vault's rollback counter is at its maximum") }
        if stamp.value == value + 1 {
            try custodian.incrementCounter(vaultID: vaultID, reference: stamp.reference, binding: binding)
        }
        return RollbackStamp(reference: stamp.reference, value: stamp.value + 1)
    }

    /// After the state carrying `stamp` is durable: the custodian's counter catches up. Returns
    /// the error when it could not. The write happened (the file is one ahead, which readers
    /// accept), but until the counter moves the copy from before it still opens: a write whose
    /// counter did not advance does not have the protection the vault promises, so the caller
    /// reports it. The next write must complete this increment first, and fails before writing
    /// anything for as long as it cannot.
    func committed(_ stamp: RollbackStamp) -> CredentialVaultError? {
        do throws(CredentialVaultError) {
            try custodian.incrementCounter(vaultID: vaultID, reference: stamp.reference, binding: binding)
            return nil
        } catch {
            return .io(
                "the change was saved, but the \(custodian.custody.name) custodian's rollback counter could not be advanced (\(error)): until it can, the copy of the vault from before this change would still open, and further changes are refused")
        }
    }
}
