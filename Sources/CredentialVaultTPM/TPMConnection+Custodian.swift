import CTSS2Esys
import CredentialVault
import Logging

/// The custodian's composite steps, and the mapping of their failures.
extension TPMConnection {
    /// Runs TPM commands; a failure becomes the typed error for it (`commandError`), or, for a
    /// counter's authorization failure, "not this vault's counter".
    func run<T>(
        _ configuration: TPMConfiguration, counter: UInt32? = nil, _ body: () throws(TPMResponseCode) -> T
    ) throws(CredentialVaultError) -> T {
        do throws(TPMResponseCode) {
            return try body()
        } catch {
            if let counter, error.tpmCode == TPMResponseCode.badAuth || error.tpmCode == TPMResponseCode.authFail {
                throw .permissionDenied(
                    "the TPM NV index 0x\(String(counter, radix: 16)) is not this vault's rollback counter (its authorization does not open it): it was replaced, or the host secret is not the one it was made with; nothing was changed")
            }
            if error.tpmCode == TPMResponseCode.policyFail {
                configuration.logger.warning(
                    "the TPM refused to unseal the device secret: the PCR values it is bound to changed since it was sealed",
                    metadata: ["category": "tpm", "tcti": .string(configuration.tcti)])
            }
            throw error.commandError(tcti: configuration.tcti, path: configuration.path)
        }
    }

    /// Loads the sealed object under the storage key and unseals it (flushing both).
    func unsealFile(_ sealed: SealedSecretFile, auth: SecureBytes) throws(TPMResponseCode) -> SecureBytes {
        let srk = try createPrimary()
        defer { flush(srk) }
        let object = try load(sealed.object, parent: srk)
        defer { flush(object) }
        return try unseal(object, auth: auth, saltKey: srk, pcrs: sealed.pcrs)
    }

    /// The value of a counter that `auth` opens (incrementing it first when it was never
    /// incremented, unless `incrementing` is false: then 0); `nil` when `auth` does not open it.
    func adoptCounter(_ nv: ESYSHandle, auth: SecureBytes, incrementing: Bool = true) throws(TPMResponseCode) -> UInt64? {
        do throws(TPMResponseCode) {
            return try read(nv, auth: auth)
        } catch {
            switch error.tpmCode {
            case TPMResponseCode.badAuth?, TPMResponseCode.authFail?: return nil
            case TPMResponseCode.nvUninitialized?:
                // The TPM checks the authorization before the written state: it is ours.
                guard incrementing else { return 0 }
                try increment(nv, auth: auth)
                return try read(nv, auth: auth)
            default: throw error
            }
        }
    }
}
