import CredentialVault
import Logging

extension TPMCustodian {
    /// Runs a TPM operation (`body`: a `TPMWorker.run`) and tells the configuration's logger
    /// and metrics what an operator must hear of: a TPM that cannot be reached, and one that did
    /// not answer before the deadline (its worker is abandoned). Only the error's kind and the
    /// TCTI are logged: a message may name the sealed secret's path.
    func observed<T>(_ body: () throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
        do { return try body() } catch {
            let metadata: Logger.Metadata = ["category": "tpm", "tcti": .string(configuration.tcti)]
            switch error {
            case .timedOut:
                configuration.metrics.timedOut(.tpm, operation: "command")
                configuration.logger.warning(
                    "the TPM did not answer within \(configuration.deadline) (timedOut): the operation's worker thread is abandoned and ends when the TPM answers",
                    metadata: metadata)
            case .notAvailable:
                configuration.logger.warning("the TPM cannot be reached, or does not hold the sealed device secret (notAvailable)", metadata: metadata)
            default:
                configuration.logger.debug("a TPM operation failed (\(error.kind))", metadata: metadata)
            }
            throw error
        }
    }
}
