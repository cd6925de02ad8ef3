import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Logging
import Testing

@testable import CredentialVaultTPM

/// What the TPM custodian tells the logger of its configuration, against a real software TPM:
/// its connections, a TPM that does not answer in time, PCR refusals; never the device secret,
/// the binding, or the sealed secret's path.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMLoggingTests {
    let tpm: SoftwareTPM
    let scratch = ScratchDirectory()
    let binding = SecureBytes.random(count: 32)
    let capture = LogCapture()

    init() async throws { tpm = try await offThePool { try SoftwareTPM() } }

    func custodian(pcrs: [Int] = [], deadline: Duration = TPMTest.deadline) -> TPMCustodian {
        var configuration = TPMConfiguration(tcti: tpm.tcti, directory: scratch.sub("state/credential-vault"), pcrs: pcrs, deadline: deadline)
        configuration.logger = capture.logger()
        return TPMCustodian(configuration: configuration)
    }

    private func entries(containing text: String) -> [LogCapture.Entry] { capture.entries.filter { $0.message.contains(text) } }

    /// No record shows the sealed secret's path or directory.
    private func expectNoSecretPathInTheLog() {
        #expect(!capture.text.contains(custodian().configuration.path) && !capture.text.contains(scratch.sub("state")), "\(capture.text)")
    }

    @Test func connectionsAreLoggedAtDebugWithTheTCTI() async throws {
        try await offThePool {
            _ = try custodian().deviceSecret(binding: binding, create: true)
            let connected = try #require(entries(containing: "connected to the TPM").first, "\(capture.text)")
            #expect(connected.level == .debug && connected.metadata["tcti"] == tpm.tcti && connected.metadata["category"] == "tpm")
            expectNoSecretPathInTheLog()
        }
    }

    @Test func aChangedPCRRefusalIsLoggedAtWarning() async throws {
        try await offThePool {
            let bound = custodian(pcrs: [16])
            _ = try bound.deviceSecret(binding: binding, create: true)
            #expect(entries(containing: "PCR").isEmpty, "\(capture.text)")
            try tpm.tool("tpm2_pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
            #expect(throws: (any Error).self) { try bound.deviceSecret(binding: self.binding, create: false) }
            let refusal = try #require(entries(containing: "PCR values it is bound to changed").first, "\(capture.text)")
            #expect(refusal.level == .warning)
            try tpm.tool("tpm2_pcrreset", ["16"])
            // Another PCR selection than the sealed one: refused before the TPM is asked.
            #expect(throws: (any Error).self) { try self.custodian().deviceSecret(binding: self.binding, create: false) }
            #expect(try #require(entries(containing: "not to the configured none").first, "\(capture.text)").level == .warning)
            expectNoSecretPathInTheLog()
        }
    }

    /// Another client holds swtpm's one connection: the call's timeout is logged at warning,
    /// saying that its worker is abandoned.
    @Test func aTimeoutIsLoggedWithItsAbandonedWorker() async throws {
        try await offThePool {
            _ = try custodian().deviceSecret(binding: binding, create: true)
            let holder = try UnixConnection(path: "\(tpm.directory)/sock")
            let custodian = custodian(deadline: .milliseconds(300))
            let binding = binding
            let outcome = try withThreadCeiling("a call to a busy TPM") {
                Result { try custodian.deviceSecret(binding: binding, create: false) }.map { _ in () }
            }
            holder.close()
            #expect(throws: CredentialVaultError.timedOut) { try outcome.get() }
            let timeout = try #require(entries(containing: "did not answer within").first, "\(capture.text)")
            #expect(timeout.level == .warning && timeout.message.contains("abandoned"))
            expectNoSecretPathInTheLog()
        }
    }

    @Test func silentByDefault() {
        #expect(TPMConfiguration().logger.handler is SwiftLogNoOpLogHandler)
        var logging = TPMConfiguration()
        logging.logger = capture.logger()
        #expect(logging == TPMConfiguration() && logging.hashValue == TPMConfiguration().hashValue, "the logger is not part of the identity")
    }
}
