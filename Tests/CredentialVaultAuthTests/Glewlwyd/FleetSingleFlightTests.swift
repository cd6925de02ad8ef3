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
    @Test("50 processes sharing a client-credentials token through the fleet store make one token request")
    func fiftyProcessesOneTokenRequest() async throws {
        let provider = try Glewlwyd.require()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cv-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: dir) }
        let keyFile = dir.appendingPathComponent("host.key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: keyFile)
        chmod(keyFile.path, 0o600)
        let secretFile = dir.appendingPathComponent("svc-secret")
        try Data((provider.serviceSecret + "\n").utf8).write(to: secretFile)
        chmod(secretFile.path, 0o600)
        let environment = [
            "CREDVAULT_POSTGRES": ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"]!,
            "CREDVAULT_FLEET_SCHEMA": "cc_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            "CREDVAULT_FLEET_HOST": "web", "CREDVAULT_FLEET_KEY_FILE": keyFile.path,
        ]
        let (initCode, _, initError) = try await CLIProcess.run(["fleet", "init"], environment: environment)
        #expect(initCode == 0, "\(initError)")
        let marker = provider.logSize()
        let arguments = [
            "auth", "token", "--client-credentials", "--issuer", provider.issuer.absoluteString, "--client-id", provider.serviceClientID,
            "--client-secret-file", secretFile.path, "--scope", "api", "--backend", "postgres",
        ]
        let processes = try (0..<50).map { _ in try CLIProcess(arguments, environment: environment) }
        var tokens: [String] = []
        for process in processes {
            #expect(try await process.wait() == 0, "\(process.stderr)")
            tokens.append(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(Set(tokens).count == 1, "\(Set(tokens).count) different tokens")
        #expect(tokens[0].split(separator: ".").count == 3)
        let issued = provider.log(from: marker).split(separator: "\n").filter {
            $0.contains("Access token generated for client '\(provider.serviceClientID)'")
        }.count
        #expect(issued == 1, "the provider issued \(issued) tokens for 50 processes")
    }
}
