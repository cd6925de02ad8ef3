import CLibPQ
import Foundation

/// The rows of a result in binary format, copied out of libpq's `PGresult` (cleared at once):
/// int8 is 8 bytes big-endian, bytea the raw bytes, text the UTF-8 bytes.
///
/// Every accessor checks the row, column and length against what the server sent, and returns
/// `nil` on anything unexpected: a hostile or confused server cannot make the store trap.
struct PGResult: Sendable {
    private let cells: [[Data?]]
    /// The affected-row count of an INSERT, UPDATE or DELETE (`PQcmdTuples`).
    let affectedRows: Int

    init(_ result: OpaquePointer) {
        let rows = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        var cells: [[Data?]] = []
        cells.reserveCapacity(rows)
        for row in 0..<rows {
            var line: [Data?] = []
            line.reserveCapacity(columns)
            for column in 0..<columns {
                let (r, c) = (Int32(row), Int32(column))
                if PQgetisnull(result, r, c) == 1 {
                    line.append(nil)
                    continue
                }
                let count = Int(PQgetlength(result, r, c))
                if count > 0, let value = PQgetvalue(result, r, c) {
                    line.append(Data(bytes: value, count: count))
                } else {
                    line.append(Data())
                }
            }
            cells.append(line)
        }
        self.cells = cells
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// The number of rows.
    var rowCount: Int { cells.count }

    /// The raw bytes of a cell; `nil` for NULL or out of range.
    func bytes(_ row: Int, _ column: Int) -> Data? {
        guard row >= 0, row < cells.count, column >= 0, column < cells[row].count else { return nil }
        return cells[row][column]
    }

    /// An int8 cell; `nil` for NULL, out of range or not 8 bytes.
    func int8(_ row: Int, _ column: Int) -> Int64? {
        guard let raw = bytes(row, column), raw.count == 8 else { return nil }
        return raw.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    /// A text cell that is valid UTF-8.
    func text(_ row: Int, _ column: Int) -> String? {
        guard let raw = bytes(row, column) else { return nil }
        return String(data: raw, encoding: .utf8)
    }
}
