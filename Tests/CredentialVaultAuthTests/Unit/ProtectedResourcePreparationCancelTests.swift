import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The one preparation at a time of `ProtectedResourceClient` when a caller gives up.
@Suite("MCP client profile: shared preparation and cancellation")
struct ProtectedResourcePreparationCancelTests {
    @Test("a cancelled caller does not let a later caller start a second preparation while the first still runs")
    func cancelledCallerKeepsOnePreparation() async throws {
        let gate = Gate()
        let metadata = "/.well-known/oauth-protected-resource/mcp"
        // The resource's metadata waits on the gate: the first preparation stays in flight
        // (its outcome, a 404 once the gate opens, does not matter here).
        let stub = try StubProvider { request in
            guard request.path == metadata else { return .notFound }
            return .raw([.wait(gate), .bytes(Data("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))])
        }
        defer { stub.close() }
        let client = try ProtectedResourceClient(
            configuration: ProtectedResourceClientTests.configuration(stub, document: nil), store: InMemoryStore())
        let first = Task { try await client.prepare(from: nil) }
        try await waitUntil { stub.requests(to: metadata).count == 1 }
        // Without this cancellation the second caller joins the first preparation (one request).
        first.cancel()
        _ = await first.result
        let second = Task { try await client.prepare(from: nil) }
        // Give the second caller time to reach the registration endpoint if it starts its own.
        try await Task.sleep(for: .milliseconds(500))
        let discoveries = stub.requests(to: metadata).count
        gate.open()
        _ = await second.result
        #expect(discoveries == 1, "the second caller shares the preparation still in flight")
    }

    func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}
