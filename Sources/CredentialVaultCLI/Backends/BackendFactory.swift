import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The backends and custodians an executable links beyond the sealed file and memory, which
/// every `credvault` has. Each executable's `main.swift` hands its own to `CommandLineTool.main`:
/// the lean `credvault` one that has none and hands such command lines over to
/// `credvault-full`, which passes the Secret Service, the fleet store and the keyring and TPM
/// custodians. What a command can open is thus fixed when the executable is linked; commands
/// reach it through `VaultAccess`, which makes every choice of backend.
package protocol BackendFactory: Sendable {
    /// Runs a command line in the executable that has what it needs (`FullExecutable.handOver`),
    /// given a few words saying what that is; `nil` in an executable that has everything.
    var handOver: (@Sendable (_ needing: String) -> Int32)? { get }
    /// What `name` (`secret-service`, `auto` or `automatic`, `libsecret-file`) means here;
    /// `auto` asks the Secret Service without prompting and falls back to the sealed file at
    /// the request's vault when it is unavailable (a locked keyring gives a resolution with
    /// `isLocked`); `libsecret-file` is keyed by the Secret portal inside a sandbox, by
    /// `--keyring-file-password-file` outside one.
    func resolve(_ name: String, request: VaultRequest) throws -> BackendResolution
    /// libsecret's keyring file as `resolve` decided it (the portal asked for its secret now).
    func openLibsecretFile(_ request: VaultRequest) throws -> any TokenStorageBackend
    /// The Secret Service store; with `allowingInteraction`, its provider may ask a person.
    func openSecretService(allowingInteraction: Bool) throws -> any TokenStorageBackend
    /// Adds the Secret Service's state, collection and capabilities to `info` (`credvault
    /// info`); returns the exit code. Never prompts.
    func describeSecretService(into info: inout [(String, String)]) throws -> Int32
    /// The custodians a sealed file may be under besides the host-secret file (the keyring's,
    /// and the TPM the request names).
    func custodians(_ request: VaultRequest) throws -> [any DeviceCustodian]
    /// The fleet store of the request (`--postgres` or `$CREDVAULT_POSTGRES`), opened as this host.
    func openPostgres(_ vault: VaultAccess) throws -> any TokenStorageBackend
    /// `error`, raised by the fleet store, in its own words (`nil`: the common wording).
    func describeFleetError(_ error: CredentialVaultError) -> String?
}

extension BackendFactory {
    /// `error` as the one line on stderr: in the fleet store's words when the command works on
    /// the fleet store (`backend` postgres), else the common wording.
    package func describe(_ error: CredentialVaultError, backend: String?) -> String {
        guard backend == VaultBackend.postgres.rawValue, let text = describeFleetError(error) else { return error.description }
        return text
    }
}
