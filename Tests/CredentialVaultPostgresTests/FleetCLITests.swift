import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultPostgres
import Foundation
import Testing

/// `credvault` with `--backend postgres` and `credvault fleet ...`, as a user runs them.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetCLITests {
    let keys = KeyFileDirectory()
    let schema = TestCluster.freshSchema()

    var environment: [String: String] {
        [
            "CREDVAULT_POSTGRES": TestCluster.conninfo!, "CREDVAULT_FLEET_SCHEMA": schema, "CREDVAULT_FLEET_HOST": "web-1",
            "PATH": "/usr/bin:/bin", "HOME": keys.url.path, "XDG_DATA_HOME": keys.url.appendingPathComponent("data").path,
        ]
    }

    /// Runs the lean `credvault` (which hands fleet commands to `credvault-full`).
    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> (code: Int32, out: String, err: String) {
        let ran = try CLIChild.run(arguments, environment: environment, stdin: stdin)
        return (ran.status, ran.stdoutText, ran.stderr)
    }

    @Test func fleetLifecycleThroughTheCommandLine() async throws {
        try await offThePool {
            let key = ["--key-file", keys.keyFile.path]
            let initialised = try credvault(["fleet", "init"] + key)
            #expect(initialised.code == 0, "\(initialised.err)")
            #expect(try credvault(["fleet", "init"] + key).code == 2, "a second init is refused")
            let stored = try credvault(["store", "--backend", "postgres", "--portable", "api.example", "deploy"] + key, stdin: Data("s3cret".utf8))
            #expect(stored.code == 0, "\(stored.err)")
            let refused = try credvault(["store", "--backend", "postgres", "api.example", "local"] + key, stdin: Data("x".utf8))
            #expect(refused.code == 3 && refused.err.contains("device-only"), "\(refused)")
            let looked = try credvault(["lookup", "--backend", "postgres", "api.example", "deploy"] + key)
            #expect(looked.code == 0 && looked.out == "s3cret", "\(looked)")
            #expect(try credvault(["list", "--backend", "postgres"] + key).out == "api.example\tdeploy\n")

            // Another host, enrolled with a passphrase.
            let passphrase = keys.url.appendingPathComponent("web-2.pass")
            _ = FileManager.default.createFile(atPath: passphrase.path, contents: Data("web-2 passphrase\n".utf8), attributes: [.posixPermissions: 0o600])
            let added = try credvault(["fleet", "add-host", "web-2", "--new-passphrase-file", passphrase.path, "--kdf", "interactive"] + key)
            #expect(added.code == 0, "\(added.err)")
            let fromWeb2 = try credvault(["lookup", "--backend", "postgres", "--fleet-host", "web-2", "--passphrase-file", passphrase.path, "api.example", "deploy"])
            #expect(fromWeb2.out == "s3cret", "\(fromWeb2)")
            let status = try credvault(["fleet", "status", "--json"] + key)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(status.out.utf8)) as? [String: Any], "\(status)")
            #expect(object["credentials"] as? Int == 1 && (object["hosts"] as? [Any])?.count == 2 && object["schema_version"] as? Int == 1)
            #expect(try credvault(["fleet", "remove-host", "web-2"] + key).code == 0)
            #expect(try credvault(["lookup", "--backend", "postgres", "--fleet-host", "web-2", "--passphrase-file", passphrase.path, "api.example", "deploy"]).code == 9)
            let rotated = try credvault(["fleet", "rotate"] + key)
            #expect(rotated.code == 0 && rotated.out.contains("epoch 2"), "\(rotated)")
            #expect(try credvault(["lookup", "--backend", "postgres", "api.example", "deploy"] + key).out == "s3cret")
            #expect(try credvault(["store", "--backend", "postgres", "--portable", "a", "b"]).code == 2, "no fleet key: usage error")
        }
    }

    @Test func migrateFromTheSealedFileToTheFleetAndBack() async throws {
        try await offThePool {
            let fleetKey = ["--fleet-key-file", keys.keyFile.path]
            #expect(try credvault(["fleet", "init"] + fleetKey).code == 0)
            let vault = ["--vault", keys.url.appendingPathComponent("local.cvault").path]
            #expect(try credvault(["store", "--portable", "svc", "shared"] + vault, stdin: Data("portable".utf8)).code == 0)
            #expect(try credvault(["store", "svc", "mine"] + vault, stdin: Data("device".utf8)).code == 0)
            let migrated = try credvault(["migrate", "--from", "file", "--to", "postgres"] + vault + fleetKey)
            #expect(migrated.code == 0, "\(migrated.err)")
            #expect(migrated.out.contains("migrated\tsvc\tshared") && migrated.out.contains("skipped-device-only\tsvc\tmine"), "\(migrated.out)")
            #expect(try credvault(["lookup", "--backend", "postgres", "svc", "shared"] + fleetKey).out == "portable")
            let back = try credvault(["migrate", "--from", "postgres", "--to", "file"] + vault + fleetKey)
            #expect(back.code == 0 && back.out.contains("migrated\tsvc\tshared"), "\(back)")
            #expect(try credvault(["lookup", "svc", "shared"] + vault).out == "portable")
        }
    }
}
