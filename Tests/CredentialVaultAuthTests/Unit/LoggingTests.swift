import Logging
import Foundation
import Logging
import Synchronization
import CredentialVault
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
        "client_assertion_type=jwt-bearer&client_assertion=shortcode1",
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

    @Test("levels filter, and what reaches the handler is redacted: the message and every metadata value")
    func levelsAndRedaction() throws {
        let capture = LogCapture()
        let logger = capture.logger(level: .warning).redacting
        logger.trace("trace", metadata: ["category": "t"])
        logger.debug("debug", metadata: ["category": "t"])
        logger.info("info", metadata: ["category": "t"])
        logger.warning("refresh_token=\(Self.opaque)", metadata: ["category": "t", "request": "Bearer \(Self.opaque)"])
        logger.error("error", metadata: ["nested": ["list": [.string(Self.jwt)], "value": .stringConvertible(Self.opaque)]])
        logger.critical("critical")
        #expect(capture.entries.map(\.level) == [.warning, .error, .critical])
        let warning = try #require(capture.entries.first)
        #expect(warning.message == "refresh_token=\(Redactor.mask)")
        #expect(warning.metadata == ["category": "t", "request": "Bearer \(Redactor.mask)"])
        for secret in [Self.opaque, Self.jwt] { #expect(!capture.text.contains(secret), "\(capture.text)") }
        #expect(logger.redacting.handler is RedactingLogHandler && !((logger.redacting.handler as? RedactingLogHandler)?.wrapped is RedactingLogHandler), "wrapped once")
    }

    @Test("the message closure is not evaluated below the threshold")
    func lazyMessages() {
        let evaluated = Recorder<Int>()
        let logger = LogCapture().logger(level: .error).redacting
        logger.debug("\({ evaluated.append(1); return "x" }())")
        #expect(evaluated.count == 0)
    }

    @Test("silent by default: a client given no logger logs to swift-log's no-op handler, never to the bootstrapped one")
    func silentByDefault() throws {
        #expect(Logger.credentialVaultSilent.handler is SwiftLogNoOpLogHandler)
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        let handler = try #require(listener.logger.handler as? RedactingLogHandler)
        #expect(handler.wrapped is SwiftLogNoOpLogHandler)
    }

    @Test("the application's handler gets the auth client's records with their category, module and call site, redacted")
    func handlerGetsRedactedRecords() throws {
        let capture = LogCapture()
        let listener = try LoopbackListener(port: .ephemeral, logger: capture.logger(level: .debug))
        defer { listener.close() }
        let entry = try #require(capture.entries.first)
        #expect(entry.level == .debug)
        #expect(entry.message == "listening on 127.0.0.1:\(listener.port)")
        #expect(entry.metadata == ["category": "loopback"])
        #expect(entry.source == "CredentialVaultAuth")
        #expect(entry.file.hasPrefix("CredentialVaultAuth/") && entry.line > 0, "\(entry.file):\(entry.line)")
        let line: UInt = #line + 1
        listener.logger.warning("refresh failed for refresh_token=abc.def.ghi")
        let warning = try #require(capture.entries.last)
        #expect(warning.file.hasSuffix("LoggingTests.swift") && warning.line == line, "\(warning.file):\(warning.line)")
        #expect(!warning.message.contains("abc.def.ghi"), "redacted before the handler: \(warning.message)")
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

    @Test("a token endpoint's error answer that echoes the refresh token reaches no log line, at trace")
    func providerErrorEchoingATokenIsRedacted() async throws {
        let refreshToken = "rt" + Self.opaque
        let stub = try StubProvider { request in
            guard request.path == "/token" else { return .notFound }
            guard request.form["grant_type"] == "refresh_token" else { return StubOIDC.tokens(refresh: refreshToken) }
            // A provider that names the token it refuses in its error code (untrusted text).
            return .json(#"{"error":"\#(request.form["refresh_token"] ?? "")"}"#, status: 400)
        }
        let capture = LogCapture()
        let client = try await OIDCClient(configuration: StubOIDC.configuration(stub), store: InMemoryStore(), logger: capture.logger(level: .trace))
        try await StubOIDC.signIn(client)
        await #expect(throws: AuthError.self) { _ = try await client.sessions.getAccessToken(forceRefresh: true) }
        #expect(capture.entries.contains { $0.metadata["category"] == "token" }, "the refusal was logged: \(capture.text)")
        #expect(!capture.text.contains(Self.opaque), "\(capture.text)")
    }

    @Test("every part of the OIDC and InsForge clients logs through the redaction, their HTTP layers included")
    func everyPartLogsThroughTheRedaction() async throws {
        let stub = try StubProvider { _ in .notFound }
        let oidc = try await OIDCClient(configuration: StubOIDC.configuration(stub), store: InMemoryStore(), logger: LogCapture().logger())
        let insForge = try await InsForgeClient(
            configuration: InsForgeConfiguration(baseURL: URL(string: stub.base)!, allowsInsecureHTTP: true), store: InMemoryStore(),
            logger: LogCapture().logger())
        let loggers = await [
            ("OIDC client", oidc.logger), ("OIDC provider", oidc.provider.logger), ("OIDC HTTP", oidc.provider.http.logger),
            ("OIDC sessions", oidc.sessions.logger), ("InsForge client", insForge.logger), ("InsForge API", insForge.api.logger),
            ("InsForge sessions", insForge.sessions.logger),
        ]
        for (part, logger) in loggers { #expect(logger.handler is RedactingLogHandler, "\(part)") }
    }

    @Test("credvault's stderr log lines show a provider's text escaped: it can forge no line and send no terminal escape")
    func stderrLinesCannotBeForged() async throws {
        let forged = "credvault-auth [info] client-credentials: new access token cached"
        let provider = try ServiceTokenCLI.provider(
            answer: .json(#"{"error":"invalid_scope","error_description":"refused\n\#(forged)\u001b[2K"}"#, status: 400))
        let (status, _, errors) = try await ServiceTokenCLI.run(provider, extra: ["--log-level", "debug"])
        #expect(status != 0)
        let lines = errors.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("credvault-auth [debug] token: ") }, "the refusal was logged: \(errors)")
        #expect(!lines.contains { $0.hasPrefix(forged) }, "a forged line: \(errors)")
        #expect(!errors.unicodeScalars.contains("\u{1B}"), "a terminal escape reached stderr: \(errors)")
        for line in lines { #expect(line.hasPrefix("credvault-auth [") || line.hasPrefix("credvault: "), "\(line)") }
    }

    @Test(
        "credvault logging to a stderr it cannot write (closed, full, without reader) ends with its own exit code, never a trap",
        arguments: [CLIChild.Output.closed, .devFull, .brokenPipe])
    func unwritableStderrNeverTraps(stderr: CLIChild.Output) throws {
        let unreachable = try ClosedPort()
        let dir = TempDirectory()
        let arguments = [
            "insforge", "signin", "--email", "someone@example.com", "--url", "http://127.0.0.1:\(unreachable.port)", "--log-level", "trace",
            "--backend", "memory",
        ]
        let outcome = try CLIChild.run(
            arguments, executable: BuiltProducts.full, environment: CLIChild.environment(dir), stdin: Data("password-1\n".utf8),
            stderr: stderr, timeout: 120)
        #expect(outcome.signal == nil, "\(stderr): killed by signal \(outcome.signal ?? 0)")
        #expect(outcome.status == 12, "\(stderr): exit \(outcome.status) (12: the backend could not be reached)")
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
