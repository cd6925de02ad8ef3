import CredentialVault
import CredentialVaultTPM
import Foundation

/// The TPM custodian for the custody group, when a TPM is named (`CREDVAULT_BENCH_TPM_TCTI`, or
/// `CREDVAULT_TEST_TPM_TCTI` from scripts/services/swtpm.sh), its sealed secret in `directory`.
enum TPMBench {
    static func custodians(directory: URL) -> [(String, any DeviceCustodian)] {
        let environment = ProcessInfo.processInfo.environment
        guard let tcti = environment["CREDVAULT_BENCH_TPM_TCTI"] ?? environment["CREDVAULT_TEST_TPM_TCTI"] else { return [] }
        return [("tpm", TPMCustodian(configuration: TPMConfiguration(tcti: tcti, directory: directory.path)))]
    }
}
