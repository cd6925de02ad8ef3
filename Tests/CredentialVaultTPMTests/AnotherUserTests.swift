import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultTPM

#if canImport(Glibc)
import Glibc
#endif

/// Another local user who reaches the TPM (here: a swtpm socket open to everyone, as
/// /dev/tpmrm0 is to the group tss) and holds a copy of the sealed blob, but cannot read this
/// user's host secret, cannot unseal the device secret: the object's authValue comes from the
/// binding. The control: the same process as that user, given the binding, does unseal it, so
/// the refusal is the binding's doing, not the socket's or the file's.
@Suite(
    .enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"),
    .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv to act as nobody"))
final class AnotherUserTests {
    let scratch = ScratchDirectory()

    @Test func nobodyWithTheBlobCannotUnsealWithoutTheBinding() async throws {
        try await offThePool {
            let tpm = try SoftwareTPM(shared: true)
            let binding = SecureBytes.random(count: 32)
            let mine = TPMConfiguration(tcti: tpm.tcti, directory: scratch.sub("mine"), deadline: TPMTest.deadline)
            let secret = try TPMCustodian(configuration: mine).deviceSecret(binding: binding, create: true)

            // nobody's copy of the blob, in a directory of nobody's (the checks want the user's own).
            chmod(scratch.path, 0o711)
            let theirs = scratch.sub("theirs")
            mkdir(theirs, 0o700)
            let copy = "\(theirs)/\(TPMConfiguration.defaultFileName)"
            try FileManager.default.copyItem(atPath: mine.path, toPath: copy)
            chmod(copy, 0o600)
            #expect(chown(theirs, 65534, 65534) == 0 && chown(copy, 65534, 65534) == 0)

            let wrong = [HelperRun.hex(SecureBytes.random(count: 32)), HelperRun.hex(SecureBytes(count: 32)), HelperRun.hex(SecureBytes.random(count: 16))]
            for guess in wrong {
                let line = try HelperRun.line(["unseal", tpm.tcti, theirs], stdin: guess + "\n", asNobody: true)
                #expect(line.hasPrefix("error permission denied") && line.contains("another user or with another host secret"), "\(line)")
            }
            let control = try HelperRun.line(["unseal", tpm.tcti, theirs], stdin: HelperRun.hex(binding) + "\n", asNobody: true)
            #expect(control == "unsealed \(HelperRun.fingerprint(secret))")
        }
    }
}
