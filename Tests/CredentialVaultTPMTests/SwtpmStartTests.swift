import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultTPM

/// The TPM tests start swtpm daemons while other tests talk to theirs: a daemon must not keep a
/// copy of another test's connection (tpm2-tss opens its sockets without close-on-exec), or
/// that test's swtpm, which serves one connection at a time, waits on it and answers nobody.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class SwtpmStartTests {
    let scratch = ScratchDirectory()

    /// A connection open (without close-on-exec, as tpm2-tss opens its own) while another swtpm
    /// starts, then closed: the first TPM answers the next client.
    @Test func aTPMStartedWhileAnotherIsInUseKeepsNoCopyOfItsConnection() async throws {
        try await offThePool {
            let tpm = try SoftwareTPM()
            let custodian = TPMCustodian(configuration: TPMConfiguration(
                tcti: tpm.tcti, directory: scratch.sub("state/credential-vault"), deadline: TPMTest.deadline))
            let binding = SecureBytes.random(count: 32)
            let client = try UnixConnection(path: "\(tpm.directory)/sock")
            let other = try SoftwareTPM()
            client.close()
            #expect(throws: Never.self, "the other swtpm still held the closed connection") {
                _ = try custodian.deviceSecret(binding: binding, create: true)
            }
            try other.stop()
        }
    }
}
