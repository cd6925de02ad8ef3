import CredentialVault
import Foundation

/// The TPM custodian for the custody group, when a TPM is named (`$CREDVAULT_TPM_TCTI`).
enum TPMBench {
    static func custodians() -> [(String, any DeviceCustodian)] { [] }
}
