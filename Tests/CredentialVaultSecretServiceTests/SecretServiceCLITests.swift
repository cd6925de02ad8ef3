import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `credvault` with the Secret Service: `--backend secret-service|auto`, `info`, `migrate`.
@Suite(.ownThread, .privateKeyring)
final class SecretServiceCLITests {
    /// HOME and the XDG data and state directories of the CLI runs (its vault and host secret).
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("cv-cli-\(UUID().uuidString)")

    deinit { try? FileManager.default.removeItem(at: home) }

    static var credvaultPath: String {
        TestEnvironment.probe.deletingLastPathComponent().appendingPathComponent("credvault").path
    }

    var environment: [String: String?] {
        ["HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
         "XDG_STATE_HOME": home.appendingPathComponent("state").path, "CREDVAULT_BACKEND": nil,
         // A generous wait per Secret Service call: the shared keyring answers slowly on a
         // loaded machine, and no test here is about that deadline.
         "CREDVAULT_SECRET_SERVICE_TIMEOUT": "120"]
    }

    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(Self.credvaultPath, arguments, stdin: stdin, inheriting: environment)
    }

    /// The sealed-file vault the CLI runs use, opened here with the same device identity.
    func openVault() throws -> SealedFileStore {
        let machineID = try ["/etc/machine-id", "/var/lib/dbus/machine-id"].lazy
            .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.first { !$0.isEmpty }
            ?? { throw CredentialVaultError.notAvailable("no machine id") }()
        let device = DeviceIdentity(
            hostSecretURL: home.appendingPathComponent("state/credential-vault/host-secret"), machineID: machineID)
        return try SealedFileStore.open(
            at: home.appendingPathComponent("data/credential-vault/default.cvault"), secret: .device,
            configuration: SealedFileConfiguration(device: device))
    }

    @Test func storeLookupListDeleteThroughTheSecretService() throws {
        let service = "cvtest-cli-\(UUID().uuidString.prefix(8))"
        defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: service) }
        let secret = Data([0x68, 0x69, 0x00, 0xFF, 0x0A])
        let stored = try credvault(["store", service, "alice", "--backend", "secret-service"], stdin: secret)
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(try credvault(["lookup", service, "alice", "--backend", "secret-service"]).stdout == secret)
        #expect(try TestEnvironment.unscopedStore().load(CredentialKey(service: service, account: "alice")) == secret)
        #expect(try credvault(["list", "--service", service, "--backend", "secret-service"]).stdoutText == "\(service)\talice\n")
        #expect(try credvault(["delete", service, "alice", "--backend", "secret-service"]).status == 0)
        #expect(try credvault(["lookup", service, "alice", "--backend", "secret-service"]).status == 1)
    }

    @Test func infoReportsTheSecretServiceAndTheAutomaticChoice() throws {
        let explicit = try credvault(["info", "--backend", "secret-service"])
        #expect(explicit.status == 0)
        #expect(explicit.stdoutText.contains("backend: secret-service\nprovider: gnome-keyring\nstate: unlocked\n"), "\(explicit.stdoutText)")
        #expect(explicit.stdoutText.contains("stores in: Secret Service collection"))
        let automatic = try credvault(["info", "--backend", "auto"])
        #expect(automatic.stdoutText.hasPrefix("backend: secret-service\nchosen because: the Secret Service is reachable"), "\(automatic.stdoutText)")
        let json = try credvault(["info", "--backend", "auto", "--json"])
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: String]
        #expect(object?["backend"] == "secret-service")
        #expect(object?["state"] == "unlocked")
    }

    /// `auto` falls back to the file only when the Secret Service is absent; a locked keyring
    /// is reported (exit code 10, with what to do), never silently replaced by the file.
    @Test(.throwAwayBuses) func automaticReportsALockedKeyringAndFallsBackOnlyWhenAbsent() throws {
        func inBus(_ mode: String, _ arguments: [String]) throws -> CLIChild.Outcome {
            try CLIChild.run(
                TestEnvironment.withKeyringScript.path, [mode, "--", Self.credvaultPath] + arguments,
                inheriting: ["CREDVAULT_BACKEND": nil])
        }
        let locked = try inBus("--locked", ["info", "--backend", "auto"])
        #expect(locked.status == 10, "\(locked.stderr)")
        #expect(
            locked.stdoutText.hasPrefix(
                "backend: secret-service\nchosen because: the Secret Service's Login collection is locked: log in to the desktop session, or unlock the login keyring with seahorse"),
            "\(locked.stdoutText)")
        #expect(locked.stdoutText.contains("--backend file"))
        #expect(locked.stdoutText.contains("state: locked"))
        let lockedStore = try inBus("--locked", ["store", "svc", "acct", "--backend", "auto"])
        #expect(lockedStore.status == 10, "\(lockedStore.stderr)")
        // One line of credvault's own (the throw-away bus's dbus-daemon may log on stderr too).
        let lines = lockedStore.stderr.split(separator: "\n").filter { $0.hasPrefix("credvault:") }
        #expect(lines.count == 1, "\(lockedStore.stderr)")
        #expect(lines.first?.hasPrefix("credvault: the Secret Service's Login collection is locked") == true, "\(lockedStore.stderr)")
        #expect(lines.first?.contains("--backend file") == true)
        let lockedExplicit = try inBus("--locked", ["info", "--backend", "secret-service"])
        #expect(lockedExplicit.status == 0)
        #expect(lockedExplicit.stdoutText.contains("state: locked"))
        let lockedLookup = try inBus("--locked", ["lookup", "svc", "acct", "--backend", "secret-service"])
        #expect(lockedLookup.status == 10, "locked, never 'not found': \(lockedLookup.stderr)")

        let absent = try inBus("--no-provider", ["info", "--backend", "auto"])
        #expect(absent.stdoutText.hasPrefix("backend: file\nchosen because: the Secret Service is not available"), "\(absent.stdoutText)")
        let absentExplicit = try inBus("--no-provider", ["info", "--backend", "secret-service"])
        #expect(absentExplicit.status == 8)
        #expect(absentExplicit.stdoutText.contains("state: not available"))
    }

    @Test func migrateFromTheFileToTheSecretServiceAndBack() throws {
        let service = "cvtest-migrate-\(UUID().uuidString.prefix(8))"
        defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: service) }
        #expect(try credvault(["store", service, "a", "--portable"], stdin: Data([0, 0xFF])).status == 0)
        #expect(try credvault(["store", service, "b"], stdin: Data("b".utf8)).status == 0)
        #expect(try credvault(["store", service, "nonce", "--ttl", "600"], stdin: Data("n".utf8)).status == 0)

        let there = try credvault(["migrate", "--from", "file", "--to", "secret-service"])
        #expect(there.status == 0, "\(there.stderr)")
        #expect(there.stdoutText == "migrated\t\(service)\ta\nmigrated\t\(service)\tb\n")
        #expect(there.stderr.contains("migrated 2, skipped 0 device-only, 0 conflicts, 0 vanished"))
        let keyring = TestEnvironment.unscopedStore()
        #expect(try keyring.load(CredentialKey(service: service, account: "a")) == Data([0, 0xFF]))
        #expect(try keyring.metadata(for: CredentialKey(service: service, account: "a"))?.accessibility == .portable)
        #expect(try credvault(["list"]).stdoutText == "", "the file keeps no persistent credential")
        #expect(try credvault(["lookup", service, "nonce"]).stdout == Data("n".utf8), "ephemeral ones are not migrated")

        let back = try credvault(["migrate", "--from", "secret-service", "--to", "file", "--service", service, "--json"])
        #expect(back.status == 0, "\(back.stderr)")
        let report = try JSONSerialization.jsonObject(with: back.stdout) as? [String: Any]
        #expect((report?["migrated"] as? [Any])?.count == 2)
        #expect(try credvault(["lookup", service, "a"]).stdout == Data([0, 0xFF]))
        #expect(try keyring.listKeys(service: service) == [])
        #expect(try credvault(["migrate", "--from", "file", "--to", "memory"]).status == 2)
    }
}
