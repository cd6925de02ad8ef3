import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultTesting
import Foundation
import Testing

@testable import CredentialVaultTPM

/// TPM custody of sealed-file vaults against swtpm: the custody suite every
/// custodian passes, and what a copy of `$HOME` gets with another TPM or none. Each test has a
/// swtpm of its own, so they run in parallel.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMCustodyTests {
    let tpm: SoftwareTPM

    init() async throws { tpm = try await offThePool { try SoftwareTPM() } }

    /// A custodian of `tpm` keeping its blob beside the setup's host secret.
    private func custodian(_ tpm: SoftwareTPM, _ setup: CustodySuite.Setup, tcti: String? = nil) -> TPMCustodian {
        TPMCustodian(configuration: TPMConfiguration(
            tcti: tcti ?? tpm.tcti, directory: setup.directory.appendingPathComponent("state").path, deadline: TPMTest.deadline))
    }

    private func run(_ check: (CustodySuite.Setup) throws -> Void) throws {
        var setup = try CustodySuite.Setup.scratch(custody: .tpm, custodians: [])
        defer { setup.remove() }
        setup.configuration.custodians = [custodian(tpm, setup)]
        try check(setup)
    }

    /// `run` with a device-key vault (no passphrase) made and reopened under TPM custody.
    private func runDeviceKeyVault(_ check: (CustodySuite.Setup, SealedFileStore) throws -> Void) throws {
        try run { setup in
            var setup = setup
            setup.secret = .device
            try check(setup, try CustodySuite.createsAndReopens(setup))
        }
    }

    @Test(arguments: CustodySuite.Check.allCases)
    func custodySuite(_ check: CustodySuite.Check) async throws {
        try await offThePool {     try run { try CustodySuite.run(check, on: $0) }
        }
    }

    /// The same `$HOME` (host secret, sealed blob, vault) with another TPM, or with none, opens
    /// no device-only value; this TPM still does afterwards.
    @Test func aHomeCopyWithAnotherTPMOrNoneOpensNothingDeviceOnly() async throws {
        try await offThePool {
            try run { setup in
                let store = try CustodySuite.createsAndReopens(setup)
                let deviceOnly = CredentialKey(service: "custody", account: "device-only")
                let other = try SoftwareTPM()
                // Another TPM has no counter of this vault's: the copy reads as rolled back. No TPM: not available.
                let elsewhere: [(TPMCustodian, (CredentialVaultError) -> Bool)] = [
                    (custodian(other, setup), { if case .rolledBack = $0 { true } else { false } }),
                    (custodian(tpm, setup, tcti: "swtpm:path=\(setup.directory.path)/no-tpm"), { if case .notAvailable = $0 { true } else { false } }),
                ]
                for (custodian, expected) in elsewhere {
                    var configuration = setup.configuration
                    configuration.custodians = [custodian]
                    #expect {
                        _ = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: configuration).load(deviceOnly)
                    } throws: { error in
                        (error as? CredentialVaultError).map(expected) ?? false
                    }
                }
                let again = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try again.load(deviceOnly) == Data("device".utf8))
            }
        }
    }

    /// A device-key vault under TPM custody after a TPM clear (which replaces the storage key the
    /// device secret was sealed under): the message says the TPM no longer holds the key and
    /// names the clear, not "sealed on another machine".
    @Test func aClearedTPMSaysItNoLongerHoldsTheDeviceKey() async throws {
        try await offThePool {
            try runDeviceKeyVault { setup, store in
                try tpm.tool("tpm2_clear", [])
                #expect {
                    _ = try SealedFileStore.open(at: store.url, secret: .device, configuration: setup.configuration)
                } throws: { error in
                    guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                    return message.contains("the TPM no longer holds the key") && message.contains("cleared")
                }
            }
        }
    }

    /// A device-key vault under TPM custody: no passphrase, and the host secret alone opens nothing.
    @Test func aDeviceKeyVaultNeedsTheTPM() async throws {
        try await offThePool {
            try runDeviceKeyVault { setup, store in
                var asFile = setup.configuration
                asFile.custodians = []
                asFile.custody = .file
                #expect {
                    _ = try SealedFileStore.open(at: store.url, secret: .device, configuration: asFile)
                } throws: { error in
                    guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                    return message.contains("tpm custodian, which was not configured")
                }
            }
        }
    }
}
