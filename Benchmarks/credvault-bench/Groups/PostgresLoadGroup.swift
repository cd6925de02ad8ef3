import CredentialVault
import CredentialVaultPostgres
import Foundation

/// The fleet store under load: compare-and-swap writes by 4 and 16 writers at once (each with a
/// store and connections of its own, as processes of a fleet have; each writing a credential of
/// its own) beside as many raw libpq clients each updating a row of its own, and the cost of a
/// data-key rotation of 1,000 and 10,000 credentials. Every write is bound to the store-wide
/// generation (docs/FLEET.md), so concurrent writers of different credentials serialise and
/// retry: these figures show what that costs.
enum PostgresLoadGroup {
    static let title = "Fleet store (PostgreSQL) under load: concurrent writers, rotation"

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        guard let conninfo = options.postgres else { return }
        reporter.begin(title)
        let schema = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let keyFile = try workspace.makeKeyFile("fleet-load.key")
        func configuration(_ schema: String) -> PostgresConfiguration {
            var configuration = PostgresConfiguration(connectionString: conninfo, schema: schema, freshnessInterval: .seconds(3600))
            configuration.listensForChanges = false
            return configuration
        }
        let store = try PostgresStore.initialize(configuration(schema), host: "bench", secret: .keyFile(keyFile))
        let value = Data(repeating: 7, count: PostgresGroup.valueSize)
        let writes = options.quick ? 20 : 200
        let runs = options.quick ? 1 : 5
        for writers in options.quick ? [4] : [4, 16] {
            reporter.progress("   postgres load: \(writers) writers")
            let stores = try (0..<writers).map { _ in try PostgresStore.open(configuration(schema), host: "bench", secret: .keyFile(keyFile)) }
            let raws = try (0..<writers).map { index in try RawWriter(conninfo, table: "\(schema).raw_\(writers)_\(index)") }
            let storeSample = try sample(runs: runs, writers: writers, writes: writes) { writer, round in
                try stores[writer].synchronous.save(value, for: CredentialKey(service: "bench.load", account: "w\(writer)"), options: .portable)
                _ = round
            }
            let rawSample = try sample(runs: runs, writers: writers, writes: writes) { writer, _ in try raws[writer].write() }
            let raw = Figure(group: title, name: "raw_libpq_update_\(writers)_writers", items: writers, sample: rawSample)
            var fleet = Figure(group: title, name: "pg_cas_write_\(writers)_writers", items: writers, sample: storeSample)
            fleet.relate(to: raw)
            reporter.add(raw)
            reporter.add(fleet)
        }
        for rows in options.quick ? [100] : [1000, 10000] {
            reporter.progress("   postgres load: rotation of \(rows)")
            let rotating = try PostgresStore.initialize(configuration(schema + "_r\(rows)"), host: "bench", secret: .keyFile(keyFile))
            for i in 0..<rows { try rotating.synchronous.save(value, for: CredentialKey(service: "bench.rotate", account: "\(i)"), options: .portable) }
            let started = ContinuousClock.now
            _ = try rotating.rotateDataKey(hosts: ["bench": .keyFile(keyFile)])
            let elapsed = started.duration(to: .now).nanoseconds
            reporter.add(Figure(group: title, name: "pg_rotate_\(rows)", items: rows, sample: Sample(perOpNanos: [elapsed], iterations: 1)))
        }
        _ = try? store.synchronous.deleteAll()
        reporter.note(
            "pg_cas_write_N_writers: N threads, each with its own PostgresStore (its own connections) saving its own credential \(writes) times, all at once; the time per write (wall time / writes of all), median of \(runs) runs. raw_libpq_update_N_writers: N raw libpq connections each running UPDATE ... SET version = version + 1, sealed = $1 on a row of its own table (no store semantics). pg_rotate_N: one rotation of N credentials (every row opened, re-sealed and written back in one transaction), wall time, one run.")
        reporter.end()
    }

    /// The time per write of `writers` threads each making `writes` writes at once, one value
    /// per run.
    private static func sample(runs: Int, writers: Int, writes: Int, _ body: @escaping @Sendable (Int, Int) throws -> Void) throws -> Sample {
        var perOp: [Double] = []
        for _ in 0..<runs {
            let failures = FailureBox()
            let group = DispatchGroup()
            let start = DispatchSemaphore(value: 0)
            for writer in 0..<writers {
                group.enter()
                Thread {
                    start.wait()
                    do { for round in 0..<writes { try body(writer, round) } } catch { failures.record(error) }
                    group.leave()
                }.start()
            }
            let began = ContinuousClock.now
            for _ in 0..<writers { start.signal() }
            group.wait()
            if let error = failures.first { throw error }
            perOp.append(began.duration(to: .now).nanoseconds / Double(writers * writes))
        }
        return Sample(perOpNanos: perOp, iterations: writers * writes)
    }
}

/// The first error of the writer threads.
private final class FailureBox: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var error: Error?
    func record(_ error: Error) { lock.withLock { if self.error == nil { self.error = error } } }
    var first: Error? { lock.withLock { error } }
}

/// A raw libpq client updating a row of its own table (a connection of its own).
private final class RawWriter: @unchecked Sendable {
    // @unchecked: used by one thread at a time.
    private let raw: RawLibPQ
    private let sealed = (0..<(PostgresGroup.valueSize + 40 + 60)).map { _ in UInt8.random(in: 0...255) }

    init(_ conninfo: String, table: String) throws {
        raw = try RawLibPQ(conninfo)
        try raw.simple("CREATE TABLE \(table) (id int PRIMARY KEY, version bigint NOT NULL, sealed bytea NOT NULL); INSERT INTO \(table) VALUES (1, 1, '')")
        try raw.prepare("write", "UPDATE \(table) SET version = version + 1, sealed = $1 WHERE id = 1", types: [17])
    }

    func write() throws { try raw.execute("write", [sealed]) }
}
