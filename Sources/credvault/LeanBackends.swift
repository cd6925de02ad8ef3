import CredentialVault
import CredentialVaultCLI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The lean `credvault`'s backends: none beyond the sealed file and memory, and no custodian
/// but the host-secret file, so that it links CredentialVault alone. A command line that needs
/// more is handed over to `credvault-full` before it runs (`CommandLineTool`), so the methods
/// that would open more only say where it is.
struct LeanBackends: BackendFactory {
    var handOver: (@Sendable (_ needing: String) -> Int32)? { { FullExecutable.handOver(needing: $0) } }

    func resolve(_ name: String, request: VaultRequest) throws -> BackendResolution { throw Self.secretServiceIsElsewhere }

    func openLibsecretFile(_ request: VaultRequest) throws -> any TokenStorageBackend {
        throw CredentialVaultError.notAvailable("the libsecret-file backend is only in \(FullExecutable.name)")
    }

    func openSecretService(allowingInteraction: Bool) throws -> any TokenStorageBackend { throw Self.secretServiceIsElsewhere }

    func describeSecretService(into info: inout [(String, String)]) throws -> Int32 { throw Self.secretServiceIsElsewhere }

    /// None: a vault under another custody is handed over (`VaultRequest.custodyNeedingFullExecutable`).
    func custodians(_ request: VaultRequest) throws -> [any DeviceCustodian] { [] }

    func openPostgres(_ vault: VaultAccess) throws -> any TokenStorageBackend {
        throw CredentialVaultError.notAvailable("the postgres backend is only in \(FullExecutable.name)")
    }

    func describeFleetError(_ error: CredentialVaultError) -> String? { nil }

    private static var secretServiceIsElsewhere: CredentialVaultError {
        .notAvailable("the Secret Service backend is only in \(FullExecutable.name)")
    }
}
