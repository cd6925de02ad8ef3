import CredentialVault
import CredentialVaultCLI
import Foundation
import Testing

/// How a command line's common options and the environment make a `VaultRequest`.
@Suite struct VaultRequestTests {
    func request(_ arguments: [String], environment: [String: String] = [:], defaultBackend: String = "file") throws -> VaultRequest {
        let parsed = try ParsedArguments(arguments, flags: VaultOptions.flags, options: VaultOptions.options)
        return VaultRequest(parsed, defaultBackend: defaultBackend, environment: environment)
    }

    /// The message of the usage error `body` throws (an issue is recorded when it throws none).
    func usageMessage(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> some Any) -> String? {
        #expect(throws: UsageError.self, sourceLocation: sourceLocation) { _ = try body() }?.message
    }

    @Test func theBackendIsTheOptionElseTheVariableElseTheCommandsDefault() throws {
        #expect(try request([], defaultBackend: "auto").backend == "auto")
        #expect(try request([], environment: ["CREDVAULT_BACKEND": "memory"], defaultBackend: "auto").backend == "memory")
        #expect(try request(["--backend", "file"], environment: ["CREDVAULT_BACKEND": "memory"], defaultBackend: "auto").backend == "file")
    }

    @Test func readingChecksNothingUsingAnOptionChecksIt() throws {
        let bad = try request(["--kdf", "strongest", "--custody", "safe", "--rollback-counter", "--no-rollback-counter", "--key-cache", "-1"])
        #expect(usageMessage { try bad.kdf() } == "--kdf is interactive, moderate or sensitive")
        #expect(usageMessage { try bad.custody() } == "--custody is file, keyring, tpm or portal")
        #expect(usageMessage { try bad.rollbackCounter() } == "give --rollback-counter or --no-rollback-counter, not both")
        #expect(usageMessage { try bad.keyCacheSeconds() } == "--key-cache is a number of seconds, 0 to 604800 (7 days)")
        let good = try request(["--kdf", "sensitive", "--custody", "tpm", "--no-rollback-counter", "--key-cache", "60"])
        #expect(try good.custody() == .tpm)
        #expect(try good.rollbackCounter() == false)
        #expect(try good.keyCacheSeconds() == 60)
    }

    @Test func insideASandboxANewVaultIsUnderPortalCustodyAndNeedsTheFullExecutable() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("cv-\(UUID().uuidString)/v.cvault").path
        var sandboxed = try request(["--vault", missing])
        sandboxed.sandbox = Sandbox(kind: .snap, applicationID: "example")
        #expect(sandboxed.insideSandbox && sandboxed.defaultCustody == .portal)
        #expect(sandboxed.custodyNeedingFullExecutable == "a new vault inside a Flatpak or Snap sandbox (portal custody)")
        // --custody file is still taken as asked, and the lean executable can make that vault.
        var asked = try request(["--vault", missing, "--custody", "file"])
        asked.sandbox = sandboxed.sandbox
        #expect(asked.custodyNeedingFullExecutable != sandboxed.custodyNeedingFullExecutable)
        // Outside a sandbox nothing changes.
        guard !FileManager.default.fileExists(atPath: "/.flatpak-info") else { return }  // these tests run outside one
        let outside = try request(["--vault", missing])
        #expect(!outside.insideSandbox && outside.defaultCustody == .file)
    }

    /// `SNAP_NAME` is inherited by host programs started from a snap's terminal, and anyone can
    /// set it: outside a snap's cgroup it makes no sandbox, so a new vault is not put under the
    /// custody of the portal, which answers every unsandboxed program with one shared secret.
    @Test func snapNameOutsideASnapIsNoSandboxForTheCommandLine() throws {
        guard !FileManager.default.fileExists(atPath: "/.flatpak-info") else { return }  // these tests run outside one
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("cv-\(UUID().uuidString)/v.cvault").path
        let spoofed = try request(["--vault", missing], environment: ["SNAP_NAME": "example"])
        #expect(!spoofed.insideSandbox && spoofed.defaultCustody == .file)
        #expect(spoofed.custodyNeedingFullExecutable == nil)
    }

    @Test func onlyOneKeyOptionIsAccepted() throws {
        let two = try request(["--key-file", "/k"], environment: ["CREDVAULT_PASSPHRASE_FILE": "/p"])
        #expect(usageMessage { try two.unlock.checkOne() } == "give one of --passphrase-file, --key-file, --ask-passphrase, --device")
        let keyFile = try request(["--key-file", "/k"])
        guard case .keyFile(let url)? = try keyFile.unlock.explicitKey() else {
            Issue.record("--key-file gives a key file")
            return
        }
        #expect(url.path == "/k")
        #expect(try request([]).unlock.explicitKey() == nil, "none given: the device key")
    }

    @Test func anEmptyTPMVariableNamesNoTPM() throws {
        #expect(try !request([], environment: ["CREDVAULT_TPM_TCTI": ""]).namesTPM)
        #expect(try request([], environment: ["CREDVAULT_TPM_TCTI": "swtpm:port=2321"]).namesTPM)
        #expect(try request(["--tpm-tcti", "device:/dev/tpmrm0"]).tpmTCTI == "device:/dev/tpmrm0")
    }
}
