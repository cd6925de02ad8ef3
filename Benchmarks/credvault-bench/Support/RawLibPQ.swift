import CLibPQ
import Foundation

/// The raw counterpart of the fleet store's round trips: one blocking libpq connection and a
/// prepared statement executed with binary parameters and results, the value copied out and
/// the result cleared: what any client of the same statement pays at least.
final class RawLibPQ {
    private let conn: OpaquePointer

    init(_ conninfo: String) throws {
        guard let conn = PQconnectdb(conninfo), PQstatus(conn) == CONNECTION_OK else {
            throw BenchError("raw libpq: cannot connect")
        }
        self.conn = conn
    }

    /// Runs SQL without parameters (session settings).
    func simple(_ sql: String) throws {
        let result = PQexec(conn, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchError("raw libpq: \(sql) failed") }
    }

    deinit { PQfinish(conn) }

    func prepare(_ name: String, _ sql: String, types: [Oid]) throws {
        let result = PQprepare(conn, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchError("raw libpq: prepare failed") }
    }

    /// Runs the prepared statement; returns the affected rows and the bytes of row 0 column `column`.
    @discardableResult
    func execute(_ name: String, _ params: [[UInt8]?], column: Int32 = -1) throws -> (affected: Int, bytes: [UInt8]) {
        let buffers = params.map { param -> UnsafeMutablePointer<CChar>? in
            guard let bytes = param else { return nil }
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { if $0.count > 0 { UnsafeMutableRawPointer(pointer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
            return pointer
        }
        defer { buffers.forEach { $0?.deallocate() } }
        let values: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0) } }
        let lengths = params.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: params.count)
        let result = PQexecPrepared(conn, name, Int32(params.count), values, lengths, formats, 1)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else { throw BenchError("raw libpq: statement failed") }
        var bytes: [UInt8] = []
        if column >= 0, PQntuples(result) > 0, PQgetisnull(result, 0, column) == 0, let value = PQgetvalue(result, 0, column) {
            let count = Int(PQgetlength(result, 0, column))
            bytes = value.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
        }
        return (Int(String(cString: PQcmdTuples(result))) ?? 0, bytes)
    }

    static func int8(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
}
