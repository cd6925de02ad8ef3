import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// The git and docker credential helpers and `credvault exec` with the Secret Service: the
/// helpers' default backend (`auto`) keeps credentials in the desktop keyring, as a desktop
/// user expects, and `--backend secret-service` reads them there.
@Suite(.ownThread, .privateKeyring)
final class CredentialHelperKeyringTests {
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("cv-helpers-\(UUID().uuidString)")
    let host = "cvtest-\(UUID().uuidString.prefix(8)).example.com"
    let secret = "s-\(UUID().uuidString)"

    init() throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        for name in ["git-credential-credvault", "docker-credential-credvault"] {
            try FileManager.default.createSymbolicLink(
                at: home.appendingPathComponent(name), withDestinationURL: URL(fileURLWithPath: SecretServiceCLITests.credvaultPath))
        }
    }

    deinit {
        _ = try? TestEnvironment.unscopedStore().deleteAll(service: "git:https://\(host)")
        _ = try? TestEnvironment.unscopedStore().deleteAll(service: "docker:\(host)")
        try? FileManager.default.removeItem(at: home)
    }

    /// The user's session (the private bus), no backend named: `auto`. The keyring is the one
    /// the whole parallel run shares, so a listing reads every item the other tests hold:
    /// operations get a deadline for a loaded machine, as the other CLI suites on it do.
    var environment: [String: String?] {
        ["HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
         "XDG_STATE_HOME": home.appendingPathComponent("state").path, "CREDVAULT_BACKEND": nil,
         "CREDVAULT_SECRET_SERVICE_TIMEOUT": "120"]
    }

    func run(_ program: String, _ arguments: [String], _ input: String) throws -> CLIChild.Outcome {
        try CLIChild.run(home.appendingPathComponent(program).path, arguments, stdin: Data(input.utf8), inheriting: environment)
    }

    @Test func gitCredentialsGoToTheKeyringByDefault() async throws {
        try await offThePool {
            let stored = try run("git-credential-credvault", ["store"], "protocol=https\nhost=\(host)\nusername=alice\npassword=\(secret)\n\n")
            #expect(stored.status == 0, "\(stored.stderr)")
            let key = CredentialKey(service: "git:https://\(host)", account: "alice")
            #expect(try TestEnvironment.unscopedStore().load(key) == Data(secret.utf8), "in the Secret Service")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("data/credential-vault/default.cvault").path), "not in a vault file")
            let answer = try run("git-credential-credvault", ["get"], "protocol=https\nhost=\(host)\n\n")
            #expect(answer.stdoutText == "username=alice\npassword=\(secret)\n")
            #expect(try run("git-credential-credvault", ["erase"], "protocol=https\nhost=\(host)\nusername=alice\npassword=\(secret)\n").status == 0)
            #expect(try TestEnvironment.unscopedStore().load(key) == nil)
        }
    }

    @Test func dockerCredentialsGoToTheKeyringByDefaultAndExecReadsThem() async throws {
        try await offThePool {
            let json = "{\"ServerURL\":\"\(host)\",\"Username\":\"bob\",\"Secret\":\"\(secret)\"}\n"
            #expect(try run("docker-credential-credvault", ["store"], json).status == 0)
            #expect(try TestEnvironment.unscopedStore().load(CredentialKey(service: "docker:\(host)", account: "bob")) == Data(secret.utf8))
            let got = try run("docker-credential-credvault", ["get"], host)
            #expect(got.status == 0 && got.stdoutText.contains("\"Secret\":\"\(secret)\""), "\(got.stdoutText)")
            let listed = try run("docker-credential-credvault", ["list"], "unused")
            #expect(listed.stdoutText.contains("\"\(host)\":\"bob\""), "status \(listed.status): \(listed.stderr)")
            // The same credential handed to a command, from the keyring.
            let exec = try CLIChild.run(
                SecretServiceCLITests.credvaultPath, ["exec", "--backend", "secret-service", "--env", "T=docker:\(host)/bob", "--", "sh", "-c", "printf %s \"$T\""],
                inheriting: environment)
            #expect(exec.status == 0 && exec.stdoutText == secret, "\(exec.stderr)")
            #expect(try run("docker-credential-credvault", ["erase"], host).status == 0)
            #expect(try run("docker-credential-credvault", ["get"], host).stdoutText == "credentials not found in native keychain\n")
        }
    }
}
