import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension GlewlwydTests {
    /// `credvault auth token --client-credentials` over the fleet store (PostgreSQL, from
    /// scripts/services/postgres.sh) against glewlwyd: the fleet hands out one cached token.
    /// Under `GlewlwydTests` (serialized): the provider's log counts the service client's
    /// tokens, which the other glewlwyd suites also fetch.
    @Suite(
        "fleet single flight",
        .enabled(if: ProcessInfo.processInfo.environment["CREDVAULT_TEST_POSTGRES"] != nil, "needs scripts/services/postgres.sh"))
    struct FleetSingleFlight {
        /// A fleet store in a fresh schema (`credvault fleet init`), its key file and secret file.
        struct Fleet {
            let dir: URL
            let keyFile: URL
            let secretFile: URL
            let environment: [String: String]
            let arguments: [String]
            /// The store's fleet lock as `pg_locks` shows it (an advisory lock on a bigint key,
            /// the first 8 bytes of the store id: classid its high half, objid its low half).
            let lock: (classid: UInt32, objid: UInt32)

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
                let (initCode, initOutput, initError) = try await CLIProcess.run(["fleet", "init"], environment: environment)
                #expect(initCode == 0, "\(initError)")
                guard let storeID = initOutput.firstMatch(of: /fleet store ([0-9a-f]{32})/)?.1,
                    let high = UInt32(storeID.prefix(8), radix: 16), let low = UInt32(storeID.dropFirst(8).prefix(8), radix: 16)
                else { throw FleetTestError("no store id in: \(initOutput)") }
                lock = (high, low)
            }

            /// How many sessions wait for this store's fleet lock: its own waiters only,
            /// whatever other tests on the shared cluster lock meanwhile.
            func waitingForItsLock() async throws -> Int {
                let query =
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = \(lock.classid) AND objid = \(lock.objid) "
                    + "AND objsubid = 1 AND NOT granted"
                let psql = try CLIProcess(
                    [environment["CREDVAULT_POSTGRES"]!, "-X", "-A", "-t", "-c", query], executable: URL(fileURLWithPath: "/usr/bin/psql"))
                guard try await psql.wait() == 0 else { throw FleetTestError("psql failed: \(psql.stderr)") }
                return Int(psql.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            }

            func remove() { try? FileManager.default.removeItem(at: dir) }
        }

        @Test("a holder of the fleet lock killed while others wait releases it, and one of them fetches the token")
        func killedHolderReleasesTheLock() async throws {
            let provider = try Glewlwyd.require()
            let fleet = try await Fleet(provider)
            defer { fleet.remove() }
            // Another process takes the fleet lock and keeps it (as a refresh that hangs would).
            let holder = try CLIProcess(
                ["hold-exclusive", fleet.environment["CREDVAULT_POSTGRES"]!, fleet.environment["CREDVAULT_FLEET_SCHEMA"]!, fleet.keyFile.path],
                executable: BuiltProducts.postgresHelper, environment: ["CREDVAULT_FLEET_HOST": "web"], holdingStdin: true)
            defer { holder.kill() }
            guard await holder.waitForStdoutLine({ $0.contains("holding") }) != nil else {
                throw FleetTestError("the lock holder ended before holding: \(holder.stderr)")
            }
            let marker = provider.logSize()
            let processes = try (0..<5).map { _ in try CLIProcess(fleet.arguments, environment: fleet.environment) }
            // Wait until all five wait for this store's fleet lock: the server says so (asked
            // again and again, as it tells no one), within a ceiling.
            try await withCeiling(.seconds(300), "five token processes waiting for the fleet lock") {
                while try await fleet.waitingForItsLock() < 5 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(provider.loggedServiceTokens(since: marker) == 0, "no token fetched while the lock is held")
            holder.kill()
            var tokens: [String] = []
            for process in processes {
                #expect(try await process.wait() == 0, "\(process.stderr)")
                tokens.append(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(Set(tokens).count == 1)
            #expect(try await provider.waitForLog(1) { provider.loggedServiceTokens(since: marker) } == 1)
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
            let issued = try await provider.waitForLog(1) { provider.loggedServiceTokens(since: marker) }
            #expect(issued == 1, "the provider issued \(issued) tokens for 50 processes")
        }
    }
}

struct FleetTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
