import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

@Suite("logging and redaction", .ownThread)
struct LoggingTests {
    static let jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImlhdCI6MX0.MEUCIQDx1y2z3abcdefghijklmnop"
    static let opaque = "B3YEgEpErW0wxRiwuXcKQmm51lbiRS2uMVMGPkQm3ZBdUtoh"

    @Test("secrets are removed from text", arguments: [
        "token \(jwt) here",
        "Authorization: Bearer \(opaque)",
        "grant_type=refresh_token&refresh_token=\(opaque)&client_id=cli",
        #"{"access_token":"\#(opaque)","token_type":"bearer"}"#,
        "redirect http://127.0.0.1:5/cb?code=shortcode1&state=st4te",
        "client_secret=hunter2&password=pw",
        "opaque \(opaque)",
    ])
    func redaction(text: String) {
        let redacted = Redactor.redact(text)
        for secret in [Self.jwt, Self.opaque, "shortcode1", "st4te", "hunter2", "pw&"] {
            #expect(!redacted.contains(secret), "\(redacted)")
        }
        #expect(redacted.contains(Redactor.mask))
    }

    @Test("ordinary words, URLs and error codes survive redaction")
    func keepsOrdinaryText() {
        let text = "POST http://127.0.0.1:4593/api/oidc/token -> 400 authorization_pending slow_down invalid_grant"
        #expect(Redactor.redact(text) == text)
        #expect(Redactor.describe(URL(string: "http://h:1/p?code=x&state=y")!) == "http://h:1/p?[REDACTED]")
    }

    @Test("levels filter, custom handlers get redacted records, none drops everything")
    func levelsAndDestinations() {
        let records = Recorder<LogRecord>()
        let logger = AuthLogger(level: .warning, destination: .custom { records.append($0) })
        logger.trace("t", "trace")
        logger.debug("t", "debug")
        logger.info("t", "info")
        logger.warning("t", "refresh_token=\(Self.opaque)")
        logger.error("t", "error")
        logger.critical("t", "critical")
        #expect(records.all.map(\.level) == [.warning, .error, .critical])
        #expect(records.all[0].message == "refresh_token=\(Redactor.mask)")
        #expect(records.all[0].category == "t")
        let silent = AuthLogger(level: .trace, destination: .none)
        silent.critical("t", "nothing happens")
        #expect(LogLevel(name: "WARNING") == .warning)
        #expect(LogLevel(name: "loud") == nil)
        #expect(LogLevel.allCases.map(\.description) == ["trace", "debug", "info", "warning", "error", "critical"])
    }

    @Test("the message closure is not evaluated below the threshold")
    func lazyMessages() {
        let evaluated = Recorder<Int>()
        let logger = AuthLogger(level: .error, destination: .custom { _ in })
        logger.debug("t", { evaluated.append(1); return "x" }())
        #expect(evaluated.count == 0)
    }

    @Test("the default logger is silent: at every level it does not even build its messages")
    func silentByDefault() {
        let built = Recorder<LogLevel>()
        let logger = AuthLogger()
        for level in LogLevel.allCases { logger.log(level, "session", { built.append(level); return "message" }()) }
        #expect(built.all.isEmpty, "the default logger built messages at \(built.all): it writes them somewhere")
    }

    /// An `AuthLogHandler` that keeps what it gets.
    final class KeptEntries: AuthLogHandler {
        struct Entry: Sendable {
            let level: LogLevel, message: String, metadata: [String: String], source: String, file: String, line: UInt
        }
        let entries = Recorder<Entry>()
        func log(level: LogLevel, message: String, metadata: [String: String], source: String, file: String, function: String, line: UInt) {
            entries.append(Entry(level: level, message: message, metadata: metadata, source: source, file: file, line: line))
        }
    }

    @Test("a handler (a swift-log bridge) gets redacted messages with their category and call site")
    func handlerGetsRedactedRecords() throws {
        let handler = KeptEntries()
        let logger = AuthLogger(level: .debug, handler: handler)
        logger.trace("oidc", "dropped below the level")
        let line: UInt = #line + 1
        logger.warning("oidc", "refresh failed for refresh_token=abc.def.ghi")
        #expect(handler.entries.count == 1)
        let entry = try #require(handler.entries.all.first)
        #expect(entry.level == .warning)
        #expect(entry.metadata == ["category": "oidc"])
        #expect(entry.source == "CredentialVaultAuth")
        #expect(entry.file.hasSuffix("LoggingTests.swift") && entry.line == line, "\(entry.file):\(entry.line)")
        #expect(!entry.message.contains("abc.def.ghi"), "redacted before the handler: \(entry.message)")
    }

    @Test("the stderr destination (credvault's): one line per message with level and category, secrets redacted")
    func stderrDestination() async throws {
        let provider = try ServiceTokenCLI.provider()
        let (status, token, errors) = try await ServiceTokenCLI.run(provider, extra: ["--log-level", "trace"])
        #expect(status == 0, "\(errors)")
        let lines = errors.split(separator: "\n").map(String.init)
        #expect(lines.contains("credvault-auth [info] client-credentials: new access token cached"), "\(errors)")
        #expect(lines.contains { $0.hasPrefix("credvault-auth [trace] http: POST ") }, "\(errors)")
        #expect(token.contains(ServiceTokenCLI.token))
        for secret in [ServiceTokenCLI.token, ServiceTokenCLI.secret] { #expect(!errors.contains(secret)) }
    }

    @Test("sessions, errors and requests never describe tokens")
    func descriptions() {
        let session = AuthSession(accessToken: Self.jwt, refreshToken: Self.opaque, idToken: Self.jwt, user: AuthUser(subject: "alice"))
        for text in [session.description, session.debugDescription, "\(session)"] {
            #expect(!text.contains(Self.jwt) && !text.contains(Self.opaque))
        }
        let request = HTTPRequest(
            method: "POST", url: URL(string: "https://p/token?code=abc")!, headers: ["Authorization": "Bearer \(Self.opaque)"],
            body: Data("refresh_token=\(Self.opaque)".utf8), timeout: .seconds(1))
        #expect(!request.description.contains(Self.opaque) && !request.description.contains("abc"))
        #expect(!ClientAuthentication.clientSecretBasic(secret: "hunter2").description.contains("hunter2"))
    }
}
