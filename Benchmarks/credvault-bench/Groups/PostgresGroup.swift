import CredentialVault
import CredentialVaultPostgres
import Foundation

/// The fleet store (PostgreSQL) beside a raw libpq client of the same statements in the same
/// run: a cached read (target at most 10 us), an uncached read and a compare-and-swap write
/// (targets at most 1.2x the raw prepared-statement round trip of the same statement shape).
/// 200-byte values, 100 credentials, one connection each, the synchronous API.
enum PostgresGroup {
    static let title = "Fleet store (PostgreSQL) beside raw libpq prepared statements"
    static let valueSize = 200
    static let count = 100

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        guard let conninfo = options.postgres else {
            reporter.progress("   postgres: skipped (no --postgres, $CREDVAULT_BENCH_POSTGRES or $CREDVAULT_TEST_POSTGRES)")
            return
        }
        reporter.begin(title)
        let schema = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let keyFile = try workspace.makeKeyFile("fleet.key")
        func configuration(_ freshness: Duration) -> PostgresConfiguration {
            var configuration = PostgresConfiguration(connectionString: conninfo, schema: schema, freshnessInterval: freshness)
            configuration.listensForChanges = false
            return configuration
        }
        let cached = try PostgresStore.initialize(configuration(.seconds(3600)), host: "bench", secret: .keyFile(keyFile))
        defer { _ = try? cached.synchronous.deleteAll() }
        let uncached = try PostgresStore.open(configuration(.zero), host: "bench", secret: .keyFile(keyFile))
        let value = Data((0..<valueSize).map { _ in UInt8.random(in: 0...255) })
        let keys = (0..<count).map { CredentialKey(service: "bench.fleet", account: "item-\($0)") }
        for key in keys { try cached.synchronous.save(value, for: key, options: .portable) }
        let picker = KeyPicker(keys)
        for key in keys { _ = try cached.synchronous.load(key) }

        // The raw client: its own row of the same size in a store of its own (the same tables
        // and trigger: its writes do not move this store's generation, as another host's would),
        // the same statements.
        let rawSchema = schema + "_raw"
        let rawStore = try PostgresStore.initialize(
            PostgresConfiguration(connectionString: conninfo, schema: rawSchema, freshnessInterval: .zero), host: "bench", secret: .keyFile(keyFile))
        defer { _ = try? rawStore.synchronous.deleteAll() }
        let raw = try RawLibPQ(conninfo)
        // The store's session settings (its deadlines), so both sessions do the same server work.
        try raw.simple("SET statement_timeout = 5000; SET lock_timeout = 4000; SET idle_in_transaction_session_timeout = 10000")
        let rawHash = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let rawSealed = (0..<(valueSize + 40 + 60)).map { _ in UInt8.random(in: 0...255) }
        try raw.prepare(
            "read",
            "SELECT m.generation, r.version, r.key_epoch, r.sealed, m.key_epoch, m.state_seal FROM \(schema).fleet_meta m LEFT JOIN \(schema).fleet_records r ON r.name_hash = $1",
            types: [17])
        // The store's compare-and-swap, bound to the key epoch and the generation, sealing the
        // state it leaves (docs/FLEET.md), as the store sends it (a seal of the same size).
        try raw.prepare(
            "cas",
            """
            WITH m AS (SELECT key_epoch, generation FROM \(rawSchema).fleet_meta FOR NO KEY UPDATE),
            w AS (UPDATE \(rawSchema).fleet_records SET version = $3, key_epoch = $4, expires_at = $5, sealed = $6
                WHERE name_hash = $1 AND version = $2 AND (SELECT key_epoch FROM m) = $4 AND (SELECT generation FROM m) = $7 RETURNING 1),
            s AS (UPDATE \(rawSchema).fleet_meta SET state_seal = $8 WHERE EXISTS (SELECT 1 FROM w))
            SELECT (SELECT key_epoch FROM m), (SELECT count(*) FROM w), (SELECT generation FROM m)
            """,
            types: [17, 20, 20, 20, 20, 17, 20, 17])
        try raw.prepare(
            "insert", "INSERT INTO \(rawSchema).fleet_records (name_hash, version, key_epoch, expires_at, sealed) VALUES ($1, 1, 1, NULL, $2)",
            types: [17, 17])
        try raw.execute("insert", [rawHash, rawSealed])
        // Only the raw client writes its store: it knows the generation (the trigger's count).
        var rawGeneration: Int64 = 1
        let rawSeal = (0..<32).map { _ in UInt8.random(in: 0...255) }
        // The raw reads go to the same rows as the store's uncached reads, in the same order.
        try raw.prepare("ids", "SELECT name_hash FROM \(schema).fleet_records WHERE name_hash <> $1 ORDER BY name_hash", types: [17])
        let ids = try raw.rows("ids", [rawHash])
        let rawPicker = RowPicker(ids)
        var rawVersion: Int64 = 1

        reporter.progress("   postgres: measuring")
        let reads = try Timer.measureInterleaved(
            Plan.fast(options),
            [
                { blackHole(try cached.synchronous.load(picker.next())) },
                { blackHole(try uncached.synchronous.load(picker.next())) },
                { blackHole(try raw.execute("read", [rawPicker.next()], column: 3).bytes) },
                { try raw.executeAsync("read", rawPicker.next()) },
            ])
        let writeKey = keys[0]
        let writes = try Timer.measureInterleaved(
            Plan.fast(options),
            [
                { try cached.synchronous.save(value, for: writeKey, options: .portable) },
                {
                    let next = rawVersion + 1
                    let result = try raw.execute(
                        "cas",
                        [rawHash, RawLibPQ.int8(rawVersion), RawLibPQ.int8(next), RawLibPQ.int8(1), nil, rawSealed, RawLibPQ.int8(rawGeneration), rawSeal],
                        column: 1)
                    guard result.bytes == RawLibPQ.int8(1) else { throw BenchError("raw CAS lost") }
                    rawVersion = next
                    rawGeneration += 1
                },
            ])
        let rawRead = Figure(group: title, name: "raw_libpq_read", items: count, sample: reads[2])
        var rawPolled = Figure(group: title, name: "raw_libpq_read_polled", items: count, sample: reads[3])
        rawPolled.relate(to: rawRead)
        var cachedRead = Figure(group: title, name: "pg_cached_read", items: count, sample: reads[0])
        cachedRead.relate(to: rawRead)
        cachedRead.checks.append(.atMost("median", reads[0].median, 10_000, unit: "ns"))
        var uncachedRead = Figure(group: title, name: "pg_uncached_read", items: count, sample: reads[1])
        uncachedRead.relate(to: rawRead)
        uncachedRead.checks.append(.atMost("ratio to raw_libpq_read", uncachedRead.ratio!, 1.2))
        let rawCAS = Figure(group: title, name: "raw_libpq_cas", items: count, sample: writes[1])
        var casWrite = Figure(group: title, name: "pg_cas_write", items: count, sample: writes[0])
        casWrite.relate(to: rawCAS)
        casWrite.checks.append(.atMost("ratio to raw_libpq_cas", casWrite.ratio!, 1.2))
        for figure in [rawRead, rawPolled, cachedRead, uncachedRead, rawCAS, casWrite] { reporter.add(figure) }
        reporter.note(
            "pg_*: PostgresStore through the synchronous API (one connection, the server of --postgres); cached = served from the process's cache (fresh, opened and authenticated on each read); uncached = freshness 0, one round trip (row + generation); CAS write = seal + UPDATE ... WHERE version = expected, bound to the epoch and generation known from the cache, sealing the state it leaves (one statement). raw_libpq_*: PQexecPrepared of the same statement with binary parameters, blocking, the same rows (reads) or a row of the same size in a store of its own (CAS: its writes do not move the measured store's generation), the store's session settings; raw_libpq_read_polled: the same, sent and awaited the store's way (non-blocking, poll).")
        reporter.end()
    }
}

/// Row ids in a fixed stride order (the raw reads' counterpart of `KeyPicker`).
final class RowPicker: @unchecked Sendable {
    // @unchecked: used by one measurement at a time (its closures run in turn).
    private let ids: [[UInt8]]
    private var index = 0
    init(_ ids: [[UInt8]]) { self.ids = ids }
    func next() -> [UInt8] {
        index = (index + 7919) % ids.count
        return ids[index]
    }
}
