import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultTesting
import Foundation
import Testing

@testable import CredentialVaultTPM

/// Retiring a TPM-custody vault (`SealedFileStore.retire`, `credvault retire`): its NV counter
/// is released and the file removed; an older copy, whose counter is a newer copy's, is refused
/// with nothing removed; a counter already gone does not stop it. Each test has a swtpm of its
/// own, so the NV indices listed are this test's only.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMRetireTests {
    let tpm: SoftwareTPM

    init() async throws { tpm = try await offThePool { try SoftwareTPM() } }

    /// The NV indices defined on this test's TPM (`tpm2_getcap handles-nv-index`).
    private func nvIndices() throws -> [String] {
        try tpm.tool("tpm2_getcap", ["handles-nv-index"]).split(separator: "\n").compactMap { line in
            line.split(separator: " ").last.map(String.init).flatMap { $0.hasPrefix("0x") ? $0 : nil }
        }
    }

    /// A TPM-custody vault (passphrase key) with one credential, in a scratch setup of its own.
    private func vault(_ body: (CustodySuite.Setup, SealedFileStore) throws -> Void) throws {
        var setup = try CustodySuite.Setup.scratch(custody: .tpm, custodians: [])
        defer { setup.remove() }
        setup.configuration.custodians = [TPMCustodian(configuration: TPMConfiguration(
            tcti: tpm.tcti, directory: setup.directory.appendingPathComponent("state").path, deadline: TPMTest.deadline))]
        let store = try SealedFileStore.create(
            at: setup.directory.appendingPathComponent("v.cvault"), secret: setup.secret, kdf: .insecureTestingOnly, configuration: setup.configuration)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
        try body(setup, store)
    }

    @Test func retiringReleasesTheNVIndexAndRemovesTheVault() async throws {
        try await offThePool {
            try vault { setup, store in
                #expect(try nvIndices().count == 1, "the vault's counter")
                try SealedFileStore.retire(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try nvIndices().isEmpty, "the NV index is released")
                #expect(!FileManager.default.fileExists(atPath: store.url.path))
            }
        }
    }

    @Test func anOlderCopyIsNotRetiredAndItsCounterStays() async throws {
        try await offThePool {
            try vault { setup, store in
                let older = setup.directory.appendingPathComponent("older.cvault")
                try FileManager.default.copyItem(at: store.url, to: older)
                try store.save(Data("w".utf8), for: CredentialKey(service: "s", account: "b"), options: .default)
                #expect {
                    try SealedFileStore.retire(at: older, secret: setup.secret, configuration: setup.configuration)
                } throws: { error in
                    guard case .rolledBack(let why) = error as? CredentialVaultError else { return false }
                    return why.contains("not retired")
                }
                #expect(try nvIndices().count == 1, "the newer copy's counter stays")
                #expect(FileManager.default.fileExists(atPath: older.path))
                let newer = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try newer.load(CredentialKey(service: "s", account: "b")) == Data("w".utf8))
            }
        }
    }

    @Test func aVaultWhoseCounterIsAlreadyGoneIsRetired() async throws {
        try await offThePool {
            try vault { setup, store in
                let index = try #require(try nvIndices().first)
                try tpm.tool("tpm2_nvundefine", [index])
                try SealedFileStore.retire(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(!FileManager.default.fileExists(atPath: store.url.path))
            }
        }
    }

    @Test func theCLIRetiresOnlyWithYes() async throws {
        try await offThePool { try self.retireThroughTheCLI() }
    }

    /// `credvault init --custody tpm`, `retire` (refused), `retire --yes` (done).
    private func retireThroughTheCLI() throws {
        let scratch = ScratchDirectory()
        let passphrase = scratch.sub("pass")
        #expect(FileManager.default.createFile(atPath: passphrase, contents: Data("retire me".utf8), attributes: [.posixPermissions: 0o600]))
        let vault = scratch.sub("vaults/v.cvault")
        let environment = [
            "XDG_STATE_HOME": scratch.sub("state"), "HOME": scratch.path, "CREDVAULT_TPM_TCTI": tpm.tcti, "TSS2_LOG": "all+NONE",
        ]
        func run(_ arguments: [String]) throws -> Int32 {
            try Subprocess.run(
                BuiltProducts.credvault.path, arguments + ["--vault", vault, "--passphrase-file", passphrase], environment: environment
            ).status
        }
        #expect(try run(["init", "--custody", "tpm", "--kdf", "insecure-testing-only"]) == 0)
        #expect(try nvIndices().count == 1)
        #expect(try run(["retire"]) == 2, "without --yes: a usage error")
        #expect(FileManager.default.fileExists(atPath: vault))
        #expect(try nvIndices().count == 1)
        #expect(try run(["retire", "--yes"]) == 0)
        #expect(!FileManager.default.fileExists(atPath: vault))
        #expect(try nvIndices().isEmpty)
    }
}
