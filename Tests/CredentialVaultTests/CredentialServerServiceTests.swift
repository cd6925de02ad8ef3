#if ServiceLifecycle
import CredentialVault
import CredentialVaultCredentialServer
import CredentialVaultTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The credential server as a `Service` in a real `ServiceGroup`, over a sealed-file vault, with
/// clients that connect as systemd does: a graceful shutdown stops accepting and finishes the
/// client being answered (a value larger than the socket's buffers, read by the test at its own
/// pace) before the group returns, the socket removed; a cancellation returns at once.
@Suite("credential server service", .ownThread)
final class CredentialServerServiceTests {
    let dir = TempDirectory()
    var socket: String { dir.path("run/creds.sock").path }
    /// Values held by each test, not statics: LeakSanitizer reports a static's small Data as leaked.
    let big = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let small = Data("s3rv3d-db-passw0rd".utf8)
    /// The server's log lines.
    let log = Recorded()

    /// What the server logged, and an arrival per line.
    final class Recorded: Sendable {
        private let lines = Mutex<[String]>([])
        let arrivals = Arrivals()
        func append(_ line: String) {
            lines.withLock { $0.append(line) }
            arrivals.arrive()
        }
        var all: [String] { lines.withLock { $0 } }

        /// Waits until a line containing `text` was logged.
        func waitFor(_ text: String) async -> Bool {
            var count = 1
            while await arrivals.reached(count) {
                if all.contains(where: { $0.contains(text) }) { return true }
                count = arrivals.count + 1
            }
            return false
        }
    }

    init() throws {
        #expect(mkdir(dir.path("run").path, 0o700) == 0)
    }

    /// A server of `big` and `db` (any unit) over a new sealed-file vault holding them.
    func server() throws -> CredentialServer {
        let store = try SealedFileStore.create(at: dir.path("v.cvault"), secret: .passphrase("test"), kdf: .insecureTestingOnly)
        let bigKey = CredentialKey(service: "big.example", account: "blob")
        let dbKey = CredentialKey(service: "db.example.com", account: "app")
        try store.save(big, for: bigKey)
        try store.save(small, for: dbKey)
        let map = try CredentialMap(entries: [
            CredentialMap.Entry(credential: "big", key: bigKey), CredentialMap.Entry(credential: "db", key: dbKey),
        ])
        let log = self.log
        return try CredentialServer(
            configuration: .init(socketPath: socket, credentials: map, clientTimeout: .seconds(120)), store: store, log: { log.append($0) })
    }

    /// A client of `big` that has received its first bytes: being answered, and waiting for it to read on.
    func stalledClient() -> Int32 {
        let fd = AbstractClient.connect(socket, from: .systemd(unit: "slow.service", credential: "big"))
        #expect(fd >= 0)
        return fd
    }

    @Test("a graceful shutdown stops accepting, finishes the client being answered, removes the socket, returns")
    func gracefulShutdownFinishesClients() async throws {
        let server = try server()
        let ended = Arrivals()
        let (group, running) = startServiceGroup([server], ended: ended)
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == small)
        let stalled = stalledClient()
        var first = [UInt8](repeating: 0, count: 1)
        #expect(read(stalled, &first, 1) == 1, "the server began writing its value")

        await group.triggerGracefulShutdown()
        #expect(await log.waitFor("stopping: finishing 1 client(s) being answered"))
        #expect(ended.count == 0, "the group returned with a client half answered")
        #expect(access(socket, F_OK) == 0, "the socket stays until the client is answered")

        let rest = AbstractClient.readAll(stalled, timeout: .seconds(60))
        #expect(Data(first) + rest == big, "the whole value, \(1 + rest.count) bytes")
        try await running.value
        #expect(access(socket, F_OK) != 0, "the socket was removed")
        #expect(log.all.contains { $0.contains("served big to slow.service") })
    }

    @Test("cancelled, it drops the client being answered and returns, the socket removed")
    func cancellationReturnsAtOnce() async throws {
        let server = try server()
        let ended = Arrivals()
        let (_, running) = startServiceGroup([server], ended: ended)
        let stalled = stalledClient()
        var first = [UInt8](repeating: 0, count: 1)
        #expect(read(stalled, &first, 1) == 1)
        running.cancel()
        #expect(await ended.reached(1), "returned without the client reading on")
        #expect(access(socket, F_OK) != 0, "the socket was removed")
        let rest = AbstractClient.readAll(stalled, timeout: .seconds(60))
        #expect(1 + rest.count < big.count, "dropped: \(1 + rest.count) bytes")
    }

    @Test("a second server on the same socket is refused while the first serves; a server runs once")
    func oneServerPerSocket() async throws {
        let server = try server()
        let stop = try CredentialServer.Stop()
        let running = Task { try await server.run(until: stop) }
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == small)
        #expect(throws: CredentialVaultError.busy) {
            try CredentialServer(configuration: server.configuration, store: InMemoryStore())
        }
        stop.stopGracefully()
        try await running.value
        await #expect(throws: CredentialVaultError.self) { try await server.run(until: try CredentialServer.Stop()) }
    }
}
#endif
