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
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw BenchError("raw libpq: \(sql) failed: \(String(cString: PQerrorMessage(conn)))")
        }
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

    /// The same statement the store's way (non-blocking mode, `PQsendQueryPrepared`, `poll()`
    /// until the results are in), to tell the cost of that method from the rest of the store's.
    func executeAsync(_ name: String, _ param: [UInt8]) throws {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(param.count, 1))
        defer { pointer.deallocate() }
        param.withUnsafeBytes { UnsafeMutableRawPointer(pointer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        let values: [UnsafePointer<CChar>?] = [UnsafePointer(pointer)]
        let lengths = [Int32(param.count)]
        let formats: [Int32] = [1]
        PQsetnonblocking(conn, 1)
        defer { PQsetnonblocking(conn, 0) }
        guard PQsendQueryPrepared(conn, name, 1, values, lengths, formats, 1) == 1, PQflush(conn) == 0 else { throw BenchError("send failed") }
        while true {
            while PQisBusy(conn) == 1 {
                var descriptor = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, 5000)
                guard PQconsumeInput(conn) == 1 else { throw BenchError("lost") }
            }
            guard let result = PQgetResult(conn) else { break }
            PQclear(result)
        }
    }

    /// The first column of every row of a prepared query.
    func rows(_ name: String, _ params: [[UInt8]]) throws -> [[UInt8]] {
        let values: [UnsafePointer<CChar>?] = params.map { bytes in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { if $0.count > 0 { UnsafeMutableRawPointer(pointer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
            return UnsafePointer(pointer)
        }
        defer { values.forEach { $0?.deallocate() } }
        let lengths = params.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: params.count)
        let result = PQexecPrepared(conn, name, Int32(params.count), values, lengths, formats, 1)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw BenchError("raw libpq: query failed") }
        return (0..<PQntuples(result)).map { row in
            let count = Int(PQgetlength(result, row, 0))
            guard let value = PQgetvalue(result, row, 0) else { return [] }
            return value.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
        }
    }

    static func int8(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
}
