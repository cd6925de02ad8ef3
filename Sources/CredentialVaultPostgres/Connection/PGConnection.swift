import CLibPQ
import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One libpq connection, in non-blocking mode: every statement is sent and awaited with
/// `poll()` against a deadline, so a server or network that stops answering costs at most the
/// deadline (the server's own `statement_timeout` ends a slow statement first, with SQLSTATE
/// 57014; the client deadline is the backstop for a hung peer).
///
/// `@unchecked Sendable` because libpq forbids concurrent use of one connection but allows a
/// connection to move between threads: a `PGConnection` is only ever used by the one job that
/// checked it out of its `ConnectionPool` (or the one exclusive-access holding that pinned it),
/// and it goes back to the pool only after that job is done with it.
final class PGConnection: @unchecked Sendable {
    private let conn: OpaquePointer
    /// Statements prepared on this connection (by name).
    private var prepared: Set<String> = []
    /// Set once the connection failed: the pool closes it instead of reusing it.
    private(set) var isBroken = false

    private init(_ conn: OpaquePointer) { self.conn = conn }

    deinit { PQfinish(conn) }

    /// Connects (blocking, bounded by `connect_timeout` per host tried) and applies the
    /// session settings: the statement, lock and idle-transaction timeouts, and warnings only.
    static func connect(
        _ conninfo: String, password: String? = nil, connectTimeout: Int, statementTimeout: Duration, lockTimeout: Duration,
        deadline: ContinuousClock.Instant
    ) throws(CredentialVaultError) -> PGConnection {
        // Checked first: libpq's own parse errors would quote the string, password and all.
        let string = try ConnectionString(conninfo, password: password)
        // `dbname` first with expand_dbname = 1: the caller's string or URL is expanded, and the
        // keywords after it override what it says (the store's own deadlines always apply; a
        // password given apart wins over the string's).
        var keywords = ["dbname", "connect_timeout", "fallback_application_name", "client_encoding"]
        var values = [conninfo, String(connectTimeout), "credvault", "UTF8"]
        if let password {
            keywords.append("password")
            values.append(password)
        }
        // Over TCP, a verified TLS connection unless the caller asked otherwise (and was let).
        if let mode = TransportSecurity(string).defaultedMode {
            keywords.append("sslmode")
            values.append(mode)
        }
        let conn: OpaquePointer? = withCStrings(keywords) { k in withCStrings(values) { v in PQconnectdbParams(k, v, 1) } }
        guard let conn else { throw .io("libpq could not allocate a connection") }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = string.redacting(String(cString: PQerrorMessage(conn)))
            PQfinish(conn)
            throw PGFailure.connectError(message)
        }
        let connection = PGConnection(conn)
        // Notices (from DDL) would go to stderr: drop them (client_min_messages is warning too).
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        guard PQsetnonblocking(conn, 1) == 0 else { throw .io("libpq could not switch the connection to non-blocking mode") }
        let settings =
            "SET statement_timeout = \(milliseconds(statementTimeout)); SET lock_timeout = \(milliseconds(lockTimeout)); "
            + "SET idle_in_transaction_session_timeout = \(milliseconds(statementTimeout) * 2); SET client_min_messages = warning"
        do throws(PGFailure) { try connection.simple(settings, deadline: deadline) } catch { throw error.error }
        return connection
    }

    /// Whole milliseconds of a (validated, bounded) duration.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }

    /// Runs SQL without parameters through the simple-query protocol (several statements may
    /// be separated by `;`); results are discarded, the first error is thrown.
    func simple(_ sql: String, deadline: ContinuousClock.Instant) throws(PGFailure) {
        try guardUsable()
        guard PQsendQuery(conn, sql) == 1 else { throw fail(lost: true, "could not send a statement") }
        _ = try awaitResult(deadline: deadline)
    }

    /// Runs a statement with binary parameters and binary results, preparing it on this
    /// connection the first time (`name` identifies the statement text).
    func query(_ name: String, _ sql: String, _ params: [PGParam], deadline: ContinuousClock.Instant) throws(PGFailure) -> PGResult {
        try guardUsable()
        if !prepared.contains(name) {
            let types = params.map(\.oid)
            let sent = types.withUnsafeBufferPointer { PQsendPrepare(conn, name, sql, Int32(types.count), $0.baseAddress) }
            guard sent == 1 else { throw fail(lost: true, "could not send a statement") }
            _ = try awaitResult(deadline: deadline)
            prepared.insert(name)
        }
        let sent = Self.withParams(params) { count, values, lengths, formats in
            PQsendQueryPrepared(conn, name, count, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw fail(lost: true, "could not send a statement") }
        return try awaitResult(deadline: deadline)
    }

    /// Runs a statement with binary parameters without preparing it (the benchmark's and
    /// one-off statements).
    func queryUnprepared(_ sql: String, _ params: [PGParam], deadline: ContinuousClock.Instant) throws(PGFailure) -> PGResult {
        try guardUsable()
        let types = params.map(\.oid)
        let sent = types.withUnsafeBufferPointer { t in
            Self.withParams(params) { count, values, lengths, formats in
                PQsendQueryParams(conn, sql, count, t.baseAddress, values, lengths, formats, 1)
            }
        }
        guard sent == 1 else { throw fail(lost: true, "could not send a statement") }
        return try awaitResult(deadline: deadline)
    }

    /// The PostgreSQL backend's process id (tests kill it to cut the connection).
    var backendPID: Int32 { PQbackendPID(conn) }

    /// Whether the session runs over TLS.
    var usesTLS: Bool { PQsslInUse(conn) == 1 }

    /// A handle that cancels the statement running on this connection from another thread
    /// (`PQcancel`, which opens a connection of its own); `nil` when libpq cannot make one.
    func canceller() -> PGCanceller? { PQgetCancel(conn).map(PGCanceller.init) }

    /// The socket, for waiting on notifications.
    var socket: Int32 { PQsocket(conn) }

    /// Reads what arrived on the socket and returns the channels of the notifications queued.
    func drainNotifications() throws(PGFailure) -> [String] {
        guard PQconsumeInput(conn) == 1 else { throw fail(lost: true, "the connection was lost") }
        var channels: [String] = []
        while let note = PQnotifies(conn) {
            channels.append(String(cString: note.pointee.relname))
            PQfreemem(note)
        }
        return channels
    }

    // MARK: - Sending and waiting

    private func guardUsable() throws(PGFailure) {
        if isBroken || PQstatus(conn) != CONNECTION_OK { throw fail(lost: true, "the connection was lost") }
    }

    /// Flushes what is queued, waits for every result of the statement, and returns the last
    /// one (or throws the first error). Past `deadline` the connection is given up (`timedOut`).
    private func awaitResult(deadline: ContinuousClock.Instant) throws(PGFailure) -> PGResult {
        // Send everything (a 1 MiB value can exceed the socket buffer).
        while true {
            let flushed = PQflush(conn)
            if flushed == 0 { break }
            if flushed < 0 { throw fail(lost: true, "the connection was lost while sending") }
            let ready = try wait(for: Int16(POLLIN | POLLOUT), until: deadline)
            if ready & Int16(POLLIN) != 0, PQconsumeInput(conn) == 0 { throw fail(lost: true, "the connection was lost") }
        }
        var last: PGResult?
        var firstError: PGFailure?
        while true {
            while PQisBusy(conn) == 1 {
                _ = try wait(for: Int16(POLLIN), until: deadline)
                if PQconsumeInput(conn) == 0 { throw fail(lost: true, "the connection was lost") }
            }
            guard let result = PQgetResult(conn) else { break }
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                last = PGResult(result)
            } else if firstError == nil {
                firstError = failure(of: result)
            }
            PQclear(result)
        }
        if let firstError {
            if firstError.connectionLost { isBroken = true }
            throw firstError
        }
        guard let last else { throw fail(lost: true, "the server sent no result") }
        return last
    }

    /// Waits until the socket is ready for `events` or the deadline passes (then the
    /// connection is marked broken: a statement may still be running on the server).
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws(PGFailure) -> Int16 {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero {
                isBroken = true
                var failure = PGFailure.lost("no answer from PostgreSQL before the deadline")
                failure.timedOut = true
                throw failure
            }
            let ms = Int32(clamping: max(1, Self.milliseconds(left)))
            var descriptor = pollfd(fd: PQsocket(conn), events: events, revents: 0)
            let rc = poll(&descriptor, 1, ms)
            if rc < 0 {
                if errno == EINTR { continue }
                throw fail(lost: true, "poll failed (errno \(errno))")
            }
            if rc == 0 { continue }
            if descriptor.revents & Int16(POLLNVAL) != 0 { throw fail(lost: true, "the connection's socket is closed") }
            // POLLERR/POLLHUP: let libpq read what is left and report the failure itself.
            return descriptor.revents
        }
    }

    /// The failure a result reports. A client-side error (no SQLSTATE), class 08 or 57P0x means
    /// the connection is gone even when `PQstatus` still says OK (seen over unix sockets).
    private func failure(of result: OpaquePointer) -> PGFailure {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let lost =
            PQstatus(conn) != CONNECTION_OK || state == nil || state!.hasPrefix("08") || state!.hasPrefix("57P0")
        return PGFailure(sqlState: state, connectionLost: lost, reason: state.map { "SQLSTATE \($0)" } ?? "the connection was lost")
    }

    private func fail(lost: Bool, _ reason: String) -> PGFailure {
        if lost { isBroken = true }
        return PGFailure(sqlState: nil, connectionLost: lost, reason: reason)
    }

    /// Builds libpq's parallel parameter arrays; every buffer lives until `body` returns.
    private static func withParams<R>(
        _ params: [PGParam],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        var owned: [UnsafeMutableRawPointer] = []
        var values: [UnsafePointer<CChar>?] = []
        var lengths: [Int32] = []
        defer { owned.forEach { $0.deallocate() } }
        func put(_ bytes: UnsafeRawBufferPointer) {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
            if bytes.count > 0 { buffer.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            owned.append(buffer)
            values.append(UnsafePointer(buffer.assumingMemoryBound(to: CChar.self)))
            lengths.append(Int32(clamping: bytes.count))
        }
        for param in params {
            switch param {
            case .bytes(let data): data.withUnsafeBytes { put($0) }
            case .int8(let value): withUnsafeBytes(of: value.bigEndian) { put($0) }
            case .text(let text): Array(text.utf8).withUnsafeBytes { put($0) }
            case .nullInt8:
                values.append(nil)
                lengths.append(0)
            }
        }
        let formats = [Int32](repeating: 1, count: params.count)
        return values.withUnsafeBufferPointer { v in
            lengths.withUnsafeBufferPointer { l in
                formats.withUnsafeBufferPointer { f in body(Int32(params.count), v.baseAddress, l.baseAddress, f.baseAddress) }
            }
        }
    }
}

/// Cancels a running statement from any thread.
///
/// `@unchecked Sendable`: libpq documents `PQcancel` as safe to call from any thread (a signal
/// handler even) on a `PGcancel` that is not freed meanwhile; this object frees it only in
/// `deinit`, when no thread can call `cancel()` any more.
final class PGCanceller: @unchecked Sendable {
    private let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQfreeCancel(handle) }

    /// Asks the server to cancel the statement (it then fails with SQLSTATE 57014).
    func cancel() {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(handle, &buffer, Int32(buffer.count))
    }
}

/// Calls `body` with a NULL-terminated array of C strings that live until it returns.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    // The connection string may hold a password: wiped before it is freed.
    defer {
        for copy in copies {
            if let copy { explicit_bzero(copy, strlen(copy)) }
            free(copy)
        }
    }
    let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
