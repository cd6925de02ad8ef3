import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultTPM

#if canImport(Glibc)
import Glibc
#endif

/// No copy of the unsealed device secret is left in a process after use: a helper process
/// unseals it through the custodian, drops it, and waits; `credvault-testhelper scan-memory`
/// then searches every readable mapping of that process for the secret. (Without the one
/// more TPM command and Esys_Finalize before returning, ESYS's buffers keep one copy.)
@Suite(
    .enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"),
    .disabled(if: Sanitizers.active, "sanitizers' allocators make memory scans meaningless"))
final class TPMMemoryScanTests {
    let scratch = ScratchDirectory()

    @Test func noCopyOfTheUnsealedSecretIsLeftAfterUse() async throws {
        try await offThePool {
            let tpm = try SoftwareTPM()
            let binding = SecureBytes.random(count: 32)
            let configuration = TPMConfiguration(tcti: tpm.tcti, directory: scratch.sub("state"), deadline: TPMTest.deadline)
            let secret = try TPMCustodian(configuration: configuration).deviceSecret(binding: binding, create: true)

            let helper = try HelperRun.start(["unseal-and-wait", tpm.tcti, configuration.directory])
            helper.write(HelperRun.hex(binding) + "\n")
            let line = helper.readLine()
            #expect(line == "done \(HelperRun.fingerprint(secret))", "the helper unsealed the same secret")

            let afterUse = try scan(pid: helper.pid, for: secret)
            helper.closeInput()
            helper.wait()
            #expect(afterUse.scanned > 1 << 20, "the scan read the process's memory")
            #expect(afterUse.hits.isEmpty, "copies of the unsealed secret left after use: \(afterUse.hits)")

            // The same after sealing a new secret (the create path: seal, check, write the blob).
            let fresh = TPMConfiguration(tcti: tpm.tcti, directory: scratch.sub("fresh"), deadline: TPMTest.deadline)
            let creator = try HelperRun.start(["create-and-wait", tpm.tcti, fresh.directory])
            creator.write(HelperRun.hex(binding) + "\n")
            let created = creator.readLine()
            let made = try TPMCustodian(configuration: fresh).deviceSecret(binding: binding, create: false)
            #expect(created == "done \(HelperRun.fingerprint(made))", "the helper sealed the secret this process unseals")
            let afterCreate = try scan(pid: creator.pid, for: made)
            creator.closeInput()
            creator.wait()
            #expect(afterCreate.scanned > 1 << 20)
            #expect(afterCreate.hits.isEmpty, "copies of the new secret left after sealing it: \(afterCreate.hits)")

            // The control: the scan finds the secret where it is (this process's guarded memory).
            let control = try scan(pid: getpid(), for: secret)
            #expect(!control.hits.isEmpty, "the scanner finds a live copy")
        }
    }

    /// `credvault-testhelper scan-memory PID` with the secret on its stdin.
    private func scan(pid: pid_t, for secret: SecureBytes) throws -> (hits: [String], stackHits: [String], scanned: Int) {
        let needle = secret.withUnsafeBytes { Array($0) }
        let (_, output) = try Subprocess.run(BuiltProducts.helper.path, ["scan-memory", "\(pid)"], stdin: needle)
        let text = String(decoding: output, as: UTF8.self)
        var hits: [String] = [], stackHits: [String] = [], scanned = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 3)
            if fields.first == "hit", fields.count == 4 {
                if fields[2] == "stack" { stackHits.append(String(line)) } else { hits.append(String(line)) }
            } else if fields.first == "scanned", fields.count == 2 {
                scanned = Int(fields[1]) ?? 0
            }
        }
        return (hits, stackHits, scanned)
    }
}
