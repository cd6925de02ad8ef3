import Foundation

/// One parameter of a statement, always sent in binary format: no text escaping of names or
/// ciphertext ever happens, so nothing a caller passes can change a statement's meaning.
enum PGParam: Sendable {
    /// bytea (OID 17): the raw bytes.
    case bytes(Data)
    /// int8 (OID 20): 8 bytes big-endian.
    case int8(Int64)
    /// text (OID 25): the UTF-8 bytes.
    case text(String)
    /// SQL NULL (of type int8, the only nullable parameter the store sends).
    case nullInt8

    var oid: UInt32 {
        switch self {
        case .bytes: 17
        case .int8, .nullInt8: 20
        case .text: 25
        }
    }
}
