import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultTesting
import Foundation
import Testing

/// TPM custody through the real CLI (the lean `credvault` handing over to `credvault-full`)
/// against private swtpms (Tests/Scripts/tpm-custody-cli.sh): create, store, a TPM restart on its
/// state, an older copy refused (13) and accepted, the newer copy then refused, passwd and
/// rotate keeping custody, and a copy of everything on another TPM (counter missing: 13; even
/// after accepting there, the device-only credential: 8, the TPM no longer holding its key) or
/// with no TPM (8); a device-key vault on a TPM that is then cleared (8, saying so).
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
struct TPMCustodyCLITests {
    @Test func theCLIUnderTPMCustody() async throws {
        try await offThePool {
            let scratch = try CustodySuite.Setup.scratch(custody: .tpm, custodians: [])
            defer { scratch.remove() }
            let script = SoftwareTPM.repository.appendingPathComponent("Tests/Scripts/tpm-custody-cli.sh").path
            let credvault = BuiltProducts.directory.appendingPathComponent("credvault").path
            let output = try SoftwareTPM.run(script, [credvault, scratch.directory.path], environment: [:])
            var steps: [String: Int] = [:]
            for line in output.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, let status = Int(parts[1]) { steps[String(parts[0])] = status }
            }
            let expected: [(String, Int)] = [
                ("init", 0), ("info-custody", 0), ("store-device", 0), ("store-token", 0), ("store-newer", 0), ("lookup-after-restart", 0),
                ("lookup-older-copy", 13), ("accept-restore", 0), ("lookup-restored", 0), ("lookup-replaced-newest", 13), ("passwd", 0),
                ("rotate", 0), ("lookup-after-rotate", 0), ("another-tpm-counter", 13), ("another-tpm-accept", 0), ("another-tpm-device", 8),
                ("another-tpm-portable", 0), ("cleared-init", 0), ("cleared-store", 0), ("cleared-lookup", 8), ("cleared-message", 0),
                ("no-tpm-device", 8),
            ]
            for (step, status) in expected {
                #expect(steps[step] == status, "\(step): \(steps[step].map(String.init) ?? "missing")\n\(output)")
            }
        }
    }
}
