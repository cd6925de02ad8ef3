import CredentialVault
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// Issue 13, part 6: the library is silent by default, logs through a handler shaped like
/// swift-log's, and takes ordinary throwing closures.
@Suite(.serialized) struct LibraryFrictionTests {
    /// What the process writes to its standard error while `body` runs.
    private func stderrOutput(_ body: () -> Void) throws -> String {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let saved = dup(2)
        dup2(fds[1], 2)
        body()
        dup2(saved, 2)
        close(saved)
        close(fds[1])
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n <= 0 { break }
            output.append(contentsOf: buffer[0..<n])
        }
        close(fds[0])
        return String(decoding: output, as: UTF8.self)
    }

    @Test func theDefaultLoggerWritesNothing() throws {
        let written = try stderrOutput {
            let logger = AuthLogger()
            logger.info("session", "signed in")
            logger.critical("session", "the store is corrupted")
        }
        #expect(written.isEmpty, "the default logger wrote \(written.debugDescription)")
        let explicit = try stderrOutput { AuthLogger(destination: .stderr).info("session", "signed in") }
        #expect(explicit.contains("signed in"), "stderr is one explicit choice away")
    }

    final class Recorder: AuthLogHandler {
        struct Entry: Sendable {
            let level: LogLevel, message: String, metadata: [String: String], source: String, file: String, line: UInt
        }
        let entries = Mutex<[Entry]>([])
        func log(level: LogLevel, message: String, metadata: [String: String], source: String, file: String, function: String, line: UInt) {
            entries.withLock { $0.append(Entry(level: level, message: message, metadata: metadata, source: source, file: file, line: line)) }
        }
    }

    @Test func aHandlerGetsRedactedMessagesWithTheirCategoryAndCallSite() {
        let recorder = Recorder()
        let logger = AuthLogger(level: .debug, handler: recorder)
        logger.trace("oidc", "dropped below the level")
        let line: UInt = #line + 1
        logger.warning("oidc", "refresh failed for refresh_token=abc.def.ghi")
        let entries = recorder.entries.withLock { $0 }
        #expect(entries.count == 1)
        let entry = try! #require(entries.first)
        #expect(entry.level == .warning)
        #expect(entry.metadata == ["category": "oidc"])
        #expect(entry.source == "CredentialVaultAuth")
        #expect(entry.file.hasSuffix("LibraryFrictionTests.swift") && entry.line == line, "\(entry.file):\(entry.line)")
        #expect(!entry.message.contains("abc.def.ghi"), "redacted before the handler: \(entry.message)")
    }

    struct AppError: Error {}

    @Test func aClosureBrowserOpenerTakesAnOrdinaryThrowingClosure() async {
        let opened = Mutex<URL?>(nil)
        // No `throws(AuthError)` annotation: the closure throws the application's own errors.
        let working = ClosureBrowserOpener { url in
            if url.host == "fail.example" { throw AppError() }
            opened.withLock { $0 = url }
        }
        await #expect(throws: Never.self) { try await working.open(URL(string: "https://ok.example/a")!) }
        #expect(opened.withLock { $0 }?.host == "ok.example")
        let error = await #expect(throws: AuthError.self) { try await working.open(URL(string: "https://fail.example/a?state=s3cr3t")!) }
        #expect(error.map { !"\($0)".contains("s3cr3t") } ?? false, "the URL's query is not in the error: \(String(describing: error))")
        let passing = ClosureBrowserOpener { _ in throw AuthError.accessDenied }
        await #expect(throws: AuthError.accessDenied) { try await passing.open(URL(string: "https://x.example")!) }
    }
}
