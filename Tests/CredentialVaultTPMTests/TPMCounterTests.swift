import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultTPM

/// Rollback counters in the NV memory of a real software TPM: made, read, incremented, kept
/// across a TPM restart, removed; an index taken by someone else is skipped on creation and
/// never read, incremented or removed as this vault's. Each test has a swtpm of its own (its
/// NV indices are no other test's), so they run in parallel.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMCounterTests {
    let tpm: SoftwareTPM
    let scratch = ScratchDirectory()
    let binding = SecureBytes.random(count: 32)
    let vaultID = (0..<16).map { _ in UInt8.random(in: 0...255) }

    init() async throws { tpm = try await offThePool { try SoftwareTPM() } }

    var custodian: TPMCustodian {
        TPMCustodian(configuration: TPMConfiguration(tcti: tpm.tcti, directory: scratch.path, deadline: TPMTest.deadline))
    }

    @Test func createReadIncrementSurviveARestartAndRemove() async throws {
        try await offThePool {
            let counter = try custodian.createCounter(vaultID: vaultID, binding: binding)
            #expect(TPMBinding.ownerRange.contains(counter.reference))
            #expect(counter.reference == TPMBinding.counterIndices(vaultID: vaultID)[0])
            #expect(counter.value >= 1, "incremented once on creation (readable)")
            #expect(try custodian.readCounter(vaultID: vaultID, reference: counter.reference, binding: binding) == counter.value)

            try custodian.incrementCounter(vaultID: vaultID, reference: counter.reference, binding: binding)
            try custodian.incrementCounter(vaultID: vaultID, reference: counter.reference, binding: binding)
            #expect(try custodian.readCounter(vaultID: vaultID, reference: counter.reference, binding: binding) == counter.value + 2)

            // Non-orderly: exactly the same value after a restart without TPM2_Shutdown.
            try tpm.restart()
            #expect(try custodian.readCounter(vaultID: vaultID, reference: counter.reference, binding: binding) == counter.value + 2)

            // Made again (an interrupted creation retried): the same counter, not a second one.
            #expect(try custodian.createCounter(vaultID: vaultID, binding: binding) == RollbackCounter(reference: counter.reference, value: counter.value + 2))

            // Another binding (another user, another host secret) neither reads nor increments it.
            let stranger = SecureBytes.random(count: 32)
            expectNotThisVaults(reference: counter.reference, binding: stranger)
            #expect(try custodian.readCounter(vaultID: vaultID, reference: counter.reference, binding: binding) == counter.value + 2)

            try custodian.removeCounter(vaultID: vaultID, reference: counter.reference, binding: binding)
            #expect(try custodian.readCounter(vaultID: vaultID, reference: counter.reference, binding: binding) == nil)
            try custodian.removeCounter(vaultID: vaultID, reference: counter.reference, binding: binding)
            #expect {
                try self.custodian.incrementCounter(vaultID: self.vaultID, reference: counter.reference, binding: self.binding)
            } throws: { error in
                guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                return message.contains("does not exist on this TPM")
            }

            // A counter never goes back: a new one starts above the removed one.
            let next = try custodian.createCounter(vaultID: vaultID, binding: binding)
            #expect(next.value > counter.value + 2)
        }
    }

    @Test func takenIndicesAreSkippedAndNeverTouched() async throws {
        try await offThePool {
            let candidates = TPMBinding.counterIndices(vaultID: vaultID)
            let hex = candidates.map { "0x" + String($0, radix: 16) }
            // The first: an ordinary NV index; the second: a counter with someone else's password.
            try tpm.tool("tpm2_nvdefine", [hex[0], "-C", "o", "-s", "8", "-a", "ownerread|ownerwrite|authread|authwrite"])
            try tpm.tool("tpm2_nvdefine", [hex[1], "-C", "o", "-s", "8", "-p", "someone-else", "-a", "nt=counter|authread|authwrite|ownerread|no_da"])
            try tpm.tool("tpm2_nvincrement", [hex[1], "-P", "someone-else"])
            let before = try tpm.tool("tpm2_nvread", [hex[1], "-P", "someone-else", "-s", "8"])
            #expect(before.utf8.count == 8)

            let counter = try custodian.createCounter(vaultID: vaultID, binding: binding)
            #expect(counter.reference == candidates[2])

            for taken in candidates[0...1] {
                expectNotThisVaults(reference: taken, binding: binding)
            }
            // Both still there, the other counter unchanged.
            try tpm.tool("tpm2_nvreadpublic", [hex[0]])
            #expect(try tpm.tool("tpm2_nvread", [hex[1], "-P", "someone-else", "-s", "8"]) == before)

            // A reference outside the owner range (a damaged vault) is refused before the TPM.
            #expect {
                _ = try self.custodian.readCounter(vaultID: self.vaultID, reference: 0x8100_0001, binding: self.binding)
            } throws: { error in
                guard case .corrupted(let message) = error as? CredentialVaultError else { return false }
                return message.contains("is not a TPM NV index of the owner range")
            }
            #expect {
                _ = try self.custodian.createCounter(vaultID: [], binding: self.binding)
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
        }
    }

    /// Reading, incrementing and removing the counter at `reference` with `binding` are all
    /// refused as "not this vault's rollback counter" (`permissionDenied`).
    private func expectNotThisVaults(reference: UInt32, binding: SecureBytes) {
        for operation in [
            { try self.custodian.incrementCounter(vaultID: self.vaultID, reference: reference, binding: binding) },
            { _ = try self.custodian.readCounter(vaultID: self.vaultID, reference: reference, binding: binding) },
            { try self.custodian.removeCounter(vaultID: self.vaultID, reference: reference, binding: binding) },
        ] as [() throws -> Void] {
            #expect {
                try operation()
            } throws: { error in
                guard case .permissionDenied(let message) = error as? CredentialVaultError else { return false }
                return message.contains("is not this vault's rollback counter")
            }
        }
    }
}
