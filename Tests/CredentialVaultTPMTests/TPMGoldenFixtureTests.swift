import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultTPM

/// The golden fixture of TPM custody (`GoldenFixtures`: `tpm.cvault`, a device-key vault with
/// a rollback counter in the TPM's NV memory; `tpm-device-secret`, the device secret sealed by
/// that TPM; `tpm-state/tpm2-00.permall`, the state of the swtpm that held both, as it was when
/// the fixture was written). A swtpm started on a copy of that state is that TPM: the vault
/// opens with it and reads exactly what was written. Any other TPM has neither the key that
/// sealed the secret nor the counter.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMGoldenFixtureTests {
    private func configuration(_ folder: URL, _ tpm: SoftwareTPM) -> SealedFileConfiguration {
        var configuration = SealedFileConfiguration(device: GoldenFixtures.device(in: folder))
        configuration.custody = .tpm
        configuration.custodians = [
            TPMCustodian(configuration: TPMConfiguration(tcti: tpm.tcti, directory: folder.path, deadline: TPMTest.deadline))
        ]
        return configuration
    }

    @Test func theGoldenTPMFixtureOpensWithThatTPMOnly() async throws {
        try await offThePool {
            let dir = TempDirectory()
            let (folder, _) = try GoldenFixtures.privateCopy(in: dir)
            let url = folder.appendingPathComponent("tpm.cvault")
            let locked = try LockedVault(url: url)
            #expect(locked.custody == .tpm && locked.hasRollbackCounter && locked.keySource == .device)

            // Another TPM: the sealed secret's parent key is not there.
            let other = try SoftwareTPM()
            expectThrows(\CredentialVaultError.isNotAvailable) { try SealedFileStore.open(at: url, secret: .device, configuration: self.configuration(folder, other)) }

            let scratch = ScratchDirectory()
            let state = scratch.sub("tpm")
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
            try FileManager.default.copyItem(
                atPath: folder.appendingPathComponent("tpm-state/tpm2-00.permall").path, toPath: state + "/tpm2-00.permall")
            let tpm = try SoftwareTPM(state: state)
            let store = try SealedFileStore.open(at: url, secret: .device, configuration: configuration(folder, tpm))
            try GoldenFixtures.expectExactContents(store)
            #expect(store.custody == .tpm && store.hasRollbackCounter)
            try store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "x"), options: .portable)
            #expect(try SealedFileStore.open(at: url, secret: .device, configuration: configuration(folder, tpm)).load(CredentialKey(service: "s", account: "x")) != nil)
        }
    }

    @Test(.enabled(if: GoldenFixtures.writing)) func writeTheGoldenTPMFixture() async throws {
        try await offThePool {
            let folder = try GoldenFixtures.folderForWriting()
            let tpm = try SoftwareTPM()
            let clock = ManualClock(start: GoldenFixtures.writingStart)
            var configuration = configuration(folder, tpm)
            configuration.clock = clock
            guard try GoldenFixtures.write("tpm.cvault", configuration: configuration, clock: clock) != nil else { return }
            try tpm.stopKeepingState()
            defer { try? FileManager.default.removeItem(atPath: tpm.directory) }
            let state = folder.appendingPathComponent("tpm-state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: tpm.directory + "/tpm2-00.permall", toPath: state.appendingPathComponent("tpm2-00.permall").path)
            try GoldenFixtures.tidyAfterWriting()
        }
    }
}
