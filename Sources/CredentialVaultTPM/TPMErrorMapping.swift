import CredentialVault

/// How TPM and TSS response codes become the library's typed errors. Messages carry the
/// command and the code (fixed text, never data) and say what to do.
extension TPMResponseCode {
    /// A failure to reach the TPM at all (loading the TCTI, connecting, starting): `notAvailable`.
    func connectionError(tcti: String) -> CredentialVaultError {
        .notAvailable("no TPM at \(tcti) (\(summary)): check the TCTI (device:/dev/tpmrm0 needs read-write access, usually the group tss; swtpm:path=SOCKET a running swtpm), or use another custody")
    }

    /// A failed command.
    ///
    /// - TPM2_RC_INTEGRITY on loading the sealed object: the TPM's storage key is not the one it
    ///   was sealed under. Either this TPM was cleared since (a clear replaces the storage key:
    ///   the sealed secret is gone for good) or the blob comes from another machine's TPM; the
    ///   TPM cannot tell which, so `notAvailable` says both, the clear first (on the machine
    ///   that made the blob, the likely one). Not `deviceMismatch`, whose fixed "sealed on
    ///   another machine" misleads the owner of a cleared TPM into looking for another machine.
    /// - TPM2_RC_POLICY_FAIL: the PCRs changed since sealing. `permissionDenied` with a message
    ///   saying so, not `deviceMismatch`, which carries no message and says "sealed on another
    ///   machine": it is this machine, in another (boot) state, and the user needs to know that
    ///   restoring that state, or re-sealing, opens it again.
    /// - TPM2_RC_BAD_AUTH / AUTH_FAIL: the binding (derived from the host secret) is not the one
    ///   it was sealed with: another user's blob, or a host secret other than the one the blob
    ///   was made with. `permissionDenied` saying so: the TPM is this one (not
    ///   `deviceMismatch`), and the remedy is the matching host secret.
    /// - a tss2-mu error: the blob file does not unmarshal (`corrupted`).
    /// - a TCTI-layer error during a command: the TPM went away (`io`).
    func commandError(tcti: String, path: String) -> CredentialVaultError {
        if layer == 9 {
            // tss2-mu: the blob does not unmarshal (cut short, trailing bytes, bad sizes).
            return .corrupted("the TPM-sealed device secret \(path) is damaged (\(summary)); restore it from a backup of this machine")
        }
        if layer == 10 {
            return .io("the TPM at \(tcti) stopped answering (\(summary)); retry once it runs again")
        }
        switch tpmCode {
        case TPMResponseCode.integrity?:
            return .notAvailable(
                "the TPM no longer holds the key that sealed the device secret \(path): it was cleared since (tpm2_clear, 'Clear TPM' in the firmware setup, some firmware updates), which destroys that key for good, or the file comes from another machine's TPM; a device-key vault and device-only credentials that need it cannot be opened here, and a vault that also opens with a key file or passphrase keeps its other credentials")
        case TPMResponseCode.policyFail?:
            return .permissionDenied(
                "the TPM refuses to unseal the device secret \(path): the PCR values it is bound to changed since it was sealed (firmware, boot loader, Secure Boot or kernel change?); boot into the state it was sealed in, or move the vault to another custody from there")
        case TPMResponseCode.badAuth?, TPMResponseCode.authFail?:
            return .permissionDenied(
                "the TPM refuses the authorization for \(path): it was sealed for another user or with another host secret than this user's (\(summary))")
        case TPMResponseCode.lockout?:
            return .permissionDenied("the TPM is in dictionary-attack lockout (\(summary)); wait for it to recover or reset it with the lockout authorization")
        case TPMResponseCode.objectMemory?, TPMResponseCode.sessionMemory?:
            return .io(
                "the TPM has no free object or session slots (\(summary)): another program left objects loaded; use the resource manager (device:/dev/tpmrm0) or flush them (tpm2_flushcontext -t; tpm2_flushcontext -l)")
        case TPMResponseCode.nvSpace?: return .io("the TPM's NV memory is full (\(summary)); nothing was changed")
        case TPMResponseCode.retry?, TPMResponseCode.yielded?, TPMResponseCode.testing?:
            return .io("the TPM is busy (\(summary)); retry")
        default: return .io("the TPM refused a command (\(summary))")
        }
    }
}
