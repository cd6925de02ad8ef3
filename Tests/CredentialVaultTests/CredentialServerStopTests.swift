import CredentialVault
import CredentialVaultCredentialServer
import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `CredentialServer.Stop` through the public API only (no trait): what a stop asked for does to
/// every server it was handed to. An application serving two sockets may well hand both the one
/// `Stop` its signal handling drives; whatever the API does with that, no server may keep
/// serving (a process that never exits, a socket that stays) once the stop was asked for.
@Suite("credential server stop", .ownThread)
final class CredentialServerStopTests {
    let dir = TempDirectory()
    let value = Data("st0p-test-value".utf8)

    init() throws {
        #expect(mkdir(dir.path("run").path, 0o700) == 0)
    }

    func socket(_ name: String) -> String { dir.path("run/\(name).sock").path }

    /// A server at `run/NAME.sock` of one credential `db` (any unit), over an in-memory store.
    func server(_ name: String) throws -> CredentialServer {
        let store = InMemoryStore()
        let key = CredentialKey(service: "db.example.com", account: "app")
        try store.save(value, for: key)
        let map = try CredentialMap(entries: [CredentialMap.Entry(credential: "db", key: key)])
        return try CredentialServer(configuration: .init(socketPath: socket(name), credentials: map), store: store)
    }

    @Test("a stop handed to two servers leaves neither serving once it is asked for")
    func oneStopForTwoServersLeavesNeitherServing() async throws {
        let first = try server("first")
        let second = try server("second")
        let stop = try CredentialServer.Stop()
        let ended = Arrivals()
        let runs = [first, second].map { server in
            Task {
                defer { ended.arrive() }
                try await server.run(until: stop)
            }
        }
        // Serving or not yet: a stop asked for before a run starts is seen by that run.
        stop.stopGracefully()
        let bothEnded = await ended.reached(2, ceiling: .seconds(20))
        #expect(bothEnded, "a server went on serving after the stop was asked for")
        #expect(access(socket("first"), F_OK) != 0 && access(socket("second"), F_OK) != 0, "a socket was left behind, still served")
        // Release the one left serving (cancelling its run stops it at once), so the test ends.
        for run in runs { run.cancel() }
        _ = await ended.reached(2)
    }
}
