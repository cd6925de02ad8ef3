import CredentialVault
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `credvault auth token --client-credentials` over the fleet store (PostgreSQL, from
/// scripts/services/postgres.sh) against glewlwyd: the fleet hands out one cached token.
@Suite(
    "fleet single flight", .glewlwyd,
    .enabled(if: ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"] != nil, "needs scripts/services/postgres.sh"))
struct FleetSingleFlightTests {
    /// A fleet store in a fresh schema (`credvault fleet init`), its key file and secret file.
    struct Fleet {
        let dir: URL
        let keyFile: URL
        let secretFile: URL
        let environment: [String: String]
        let arguments: [String]

        init(_ provider: Glewlwyd) async throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("cv-fleet-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            keyFile = dir.appendingPathComponent("host.key")
            try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: keyFile)
            chmod(keyFile.path, 0o600)
            secretFile = dir.appendingPathComponent("svc-secret")
            try Data((provider.serviceSecret + "\n").utf8).write(to: secretFile)
            chmod(secretFile.path, 0o600)
            environment = [
                "CREDVAULT_POSTGRES": ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"]!,
                "CREDVAULT_FLEET_SCHEMA": "cc_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
                "CREDVAULT_FLEET_HOST": "web", "CREDVAULT_FLEET_KEY_FILE": keyFile.path,
            ]
            arguments = [
                "auth", "token", "--client-credentials", "--issuer", provider.issuer.absoluteString, "--client-id",
                provider.serviceClientID, "--client-secret-file", secretFile.path, "--scope", "api", "--backend", "postgres",
            ]
            let (initCode, _, initError) = try await CLIProcess.run(["fleet", "init"], environment: environment)
            #expect(initCode == 0, "\(initError)")
        }

        func remove() { try? FileManager.default.removeItem(at: dir) }
    }

    /// Token requests the provider logged since `marker` for the service client.
    static func issued(_ provider: Glewlwyd, since marker: Int) -> Int {
        provider.log(from: marker).split(separator: "\n").filter {
            $0.contains("Access token generated for client '\(provider.serviceClientID)'")
        }.count
    }

    @Test("a holder of the fleet lock killed while others wait releases it, and one of them fetches the token")
    func killedHolderReleasesTheLock() async throws {
        let provider = try Glewlwyd.require()
        let fleet = try await Fleet(provider)
        defer { fleet.remove() }
        // Another process takes the fleet lock and keeps it (as a refresh that hangs would).
        let holder = Process()
        holder.executableURL = CLIProcess.executable.deletingLastPathComponent().appendingPathComponent("credvault-pghelper")
        holder.arguments = ["hold-exclusive", fleet.environment["CREDVAULT_POSTGRES"]!, fleet.environment["CREDVAULT_FLEET_SCHEMA"]!, fleet.keyFile.path]
        holder.environment = ["CREDVAULT_FLEET_HOST": "web"]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        var seen = ""
        while !seen.contains("holding") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw FleetTestError("the lock holder ended before holding") }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        let marker = provider.logSize()
        let processes = try (0..<5).map { _ in try CLIProcess(fleet.arguments, environment: fleet.environment) }
        // Wait (asking the server, not for a while) until all five wait for the advisory lock.
        let conninfo = fleet.environment["CREDVAULT_POSTGRES"]!
        let deadline = ContinuousClock.now + .seconds(20)
        while try await Self.waitingForAdvisoryLock(conninfo) < 5 {
            guard ContinuousClock.now < deadline else { throw FleetTestError("the token processes never waited for the lock") }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.issued(provider, since: marker) == 0, "no token fetched while the lock is held")
        kill(holder.processIdentifier, SIGKILL)
        var tokens: [String] = []
        for process in processes {
            #expect(try await process.wait() == 0, "\(process.stderr)")
            tokens.append(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(Set(tokens).count == 1)
        #expect(Self.issued(provider, since: marker) == 1)
    }

    /// How many sessions wait for an advisory lock.
    static func waitingForAdvisoryLock(_ conninfo: String) async throws -> Int {
        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        psql.arguments = [conninfo, "-X", "-A", "-t", "-c", "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"]
        let out = Pipe()
        psql.standardOutput = out
        psql.standardError = FileHandle.nullDevice
        try psql.run()
        while psql.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard psql.terminationStatus == 0 else { throw FleetTestError("psql failed") }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    @Test("50 processes sharing a client-credentials token through the fleet store make one token request")
    func fiftyProcessesOneTokenRequest() async throws {
        let provider = try Glewlwyd.require()
        let fleet = try await Fleet(provider)
        defer { fleet.remove() }
        let marker = provider.logSize()
        let processes = try (0..<50).map { _ in try CLIProcess(fleet.arguments, environment: fleet.environment) }
        var tokens: [String] = []
        for process in processes {
            #expect(try await process.wait() == 0, "\(process.stderr)")
            tokens.append(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(Set(tokens).count == 1, "\(Set(tokens).count) different tokens")
        #expect(tokens[0].split(separator: ".").count == 3)
        let issued = Self.issued(provider, since: marker)
        #expect(issued == 1, "the provider issued \(issued) tokens for 50 processes")
    }
}

struct FleetTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
