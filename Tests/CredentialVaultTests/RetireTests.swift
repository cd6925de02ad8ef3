import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// `SealedFileStore.retire` with the host-secret file custodian: the vault's counter file and
/// its `.protected` mark go with it, and a wrong key removes nothing. (The TPM custodian's NV
/// index: `TPMRetireTests`.)
@Suite(.ownThread) final class RetireTests {
    let dir = TempDirectory()

    private var countersDirectory: URL {
        TestVault.device(in: dir).hostSecretURL.deletingLastPathComponent().appendingPathComponent("counters")
    }

    private func counterFiles() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: countersDirectory.path)) ?? []
    }

    @Test func retiringRemovesTheCounterFileTheMarkAndTheVault() throws {
        var configuration = TestVault.configuration(dir)
        configuration.rollbackCounter = true
        let url = dir.path("v/v.cvault")
        let store = try SealedFileStore.create(at: url, secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: configuration)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
        #expect(counterFiles().count == 2, "the counter and the mark: \(counterFiles())")

        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try SealedFileStore.retire(at: url, secret: .passphrase("not it"), configuration: configuration)
        }
        #expect(FileManager.default.fileExists(atPath: url.path) && counterFiles().count == 2, "a wrong key removes nothing")

        try SealedFileStore.retire(at: url, secret: .passphrase(TestVault.passphrase), configuration: configuration)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).isEmpty, "its lock file too")
        #expect(counterFiles().isEmpty, "\(counterFiles())")
    }
}
