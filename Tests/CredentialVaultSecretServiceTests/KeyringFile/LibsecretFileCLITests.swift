import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTestSupport
import Foundation
import Testing

/// `credvault --backend libsecret-file` outside a sandbox: keyed by
/// `--keyring-file-password-file` (libsecret's `SECRET_FILE_TEST_PASSWORD`), at
/// `$SECRET_FILE_TEST_PATH` as libsecret reads it, shared with `secret-tool`; refused without a
/// password. The lean `credvault` hands it over to `credvault-full`.
@Suite(.ownThread, .enabled(if: Sandbox.detect(environment: [:]) == nil, "the tests run inside a Flatpak sandbox"))
struct LibsecretFileCLITests {
    static var credvaultPath: String {
        TestEnvironment.probe.deletingLastPathComponent().appendingPathComponent("credvault").path
    }

    let file = SecretToolFile()
    let home = TempDirectory()

    var environment: [String: String?] {
        ["HOME": home.url.path, "XDG_DATA_HOME": home.path("data").path, "XDG_STATE_HOME": home.path("state").path,
         "CREDVAULT_BACKEND": nil, "SECRET_FILE_TEST_PATH": file.path, "SNAP_NAME": nil]
    }

    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(Self.credvaultPath, arguments, stdin: stdin, inheriting: environment)
    }

    /// The password in a file only this user can read (as `SecretReader` demands).
    func passwordFile(_ password: String) throws -> String {
        let url = home.path("keyring-password")
        try Data((password + "\n").utf8).write(to: url)
        chmod(url.path, 0o600)
        return url.path
    }

    @Test func storesWithAPasswordFileAndSharesWithSecretToolBothWays() async throws {
        let password = try passwordFile(file.password)
        let options = ["--backend", "libsecret-file", "--keyring-file-password-file", password]
        let stored = try credvault(["store", "shared", "alice"] + options, stdin: Data("from credvault".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(try await file.lookup(["service": "shared", "username": "alice"]) == "from credvault")
        #expect(try await file.store("from secret-tool", attributes: ["service": "shared", "username": "bob"]))
        #expect(try credvault(["lookup", "shared", "bob"] + options).stdoutText == "from secret-tool")
        let info = try credvault(["info"] + options)
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdoutText.contains("path: \(file.path)\n"))
        #expect(info.stdoutText.contains("key from: the password given\n"))
        #expect(info.stdoutText.contains("credentials: 2\n"))
    }

    @Test func withoutAPasswordOutsideASandboxItIsRefusedAsNotAvailable() throws {
        let refused = try credvault(["lookup", "shared", "alice", "--backend", "libsecret-file"])
        #expect(refused.status == 8)
        #expect(refused.stderr.contains("needs its password: give --keyring-file-password-file"))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func aPasswordFileOthersCanReadIsRefusedBeforeItIsRead() throws {
        let password = try passwordFile(file.password)
        chmod(password, 0o644)
        let refused = try credvault(["lookup", "shared", "alice", "--backend", "libsecret-file", "--keyring-file-password-file", password])
        #expect(refused.status == 2 || refused.status == 9, "\(refused.status): \(refused.stderr)")
        #expect(!refused.stderr.contains(file.password))
    }
}
