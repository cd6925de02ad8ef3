import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a `CrashingCustodian` kills its process: the steps of a save with a rollback counter.
enum RollbackCrashPoint: String {
    /// Before the save reads the counter (nothing of it written yet).
    case beforeRead = "before-read"
    /// After the new state is durable, before the counter's increment.
    case beforeIncrement = "before-increment"
    /// After the increment, before the save returns.
    case afterIncrement = "after-increment"
}

/// The host-file custodian, which SIGKILLs its own process at `point` of the `saveNumber`th
/// save (counting increments and reads): the injection of a crash between the steps of the
/// rollback protocol, around the real custodian.
struct CrashingCustodian: DeviceCustodian {
    let real: HostFileCustodian
    let point: RollbackCrashPoint
    let saveNumber: Int
    let reads = Counter()
    let increments = Counter()

    final class Counter: @unchecked Sendable {  // one writer thread: the helper's loop
        var value = 0
    }

    var custody: DeviceCustody { .file }

    func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        try real.deviceSecret(binding: binding, create: create)
    }

    func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        try real.createCounter(vaultID: vaultID, binding: binding)
    }

    func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        reads.value += 1
        // The open reads once; then each save reads once before writing.
        if point == .beforeRead && reads.value == saveNumber + 1 { kill(getpid(), SIGKILL) }
        return try real.readCounter(vaultID: vaultID, reference: reference, binding: binding)
    }

    func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        increments.value += 1
        if point == .beforeIncrement && increments.value == saveNumber { kill(getpid(), SIGKILL) }
        try real.incrementCounter(vaultID: vaultID, reference: reference, binding: binding)
        if point == .afterIncrement && increments.value == saveNumber { kill(getpid(), SIGKILL) }
    }

    func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        try real.removeCounter(vaultID: vaultID, reference: reference, binding: binding)
    }
}

/// `rollback-crash-writer VAULT KEYFILE POINT N`: saves `rollback-I` = `value-I` for I = 0, 1,
/// ... printing "ack I" after each, through a custodian that kills the process at POINT of
/// save N (`RollbackCrashPoint`).
func rollbackCrashWriter(_ args: [String]) throws {
    guard let point = RollbackCrashPoint(rawValue: args[2]), let number = Int(args[3]) else { fail("bad crash point") }
    var configuration = testConfiguration
    let real = HostFileCustodian(directory: testIdentity.hostSecretURL.deletingLastPathComponent())
    configuration.custodians = [CrashingCustodian(real: real, point: point, saveNumber: number)]
    let store = try SealedFileStore.open(
        at: URL(fileURLWithPath: args[0]), secret: .keyFile(URL(fileURLWithPath: args[1])), configuration: configuration)
    for i in 0..<1000 {
        try store.save(Data("value-\(i)".utf8), for: CredentialKey(service: "rollback", account: "k\(i)"), options: .portable)
        emit("ack \(i)")
    }
}
