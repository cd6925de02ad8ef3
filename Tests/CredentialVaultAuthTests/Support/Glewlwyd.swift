import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The local glewlwyd that `scripts/services/glewlwyd.sh start` provisions, described by the
/// environment it prints (exported by `scripts/test.sh`).
struct Glewlwyd: Sendable {
    let base: URL
    let issuer: URL
    let shortIssuer: URL
    let clientID: String
    let redirectURI: String
    let redirectPort: UInt16
    let customRedirectURI: String
    let user: String
    let password: String
    let adminUser: String
    let adminPassword: String
    let serviceClientID: String
    let serviceSecret: String
    let rotatedJWKSFile: String
    let logFile: String

    /// `nil` when the provider is not configured (the suites are then skipped).
    static let shared: Glewlwyd? = {
        let env = ProcessInfo.processInfo.environment
        guard let issuer = env["GLEWLWYD_ISSUER"].flatMap(URL.init(string:)),
            let base = env["GLEWLWYD_URL"].flatMap(URL.init(string:)),
            let short = env["GLEWLWYD_SHORT_ISSUER"].flatMap(URL.init(string:)),
            let port = env["GLEWLWYD_REDIRECT_PORT"].flatMap(UInt16.init),
            let secretFile = env["GLEWLWYD_SERVICE_SECRET_FILE"],
            let secret = try? String(contentsOfFile: secretFile, encoding: .utf8)
        else { return nil }
        return Glewlwyd(
            base: base, issuer: issuer, shortIssuer: short, clientID: env["GLEWLWYD_CLIENT_ID"] ?? "cli",
            redirectURI: env["GLEWLWYD_REDIRECT_URI"] ?? "", redirectPort: port,
            customRedirectURI: env["GLEWLWYD_CUSTOM_REDIRECT_URI"] ?? "", user: env["GLEWLWYD_USER"] ?? "alice",
            password: env["GLEWLWYD_PASSWORD"] ?? "password", adminUser: env["GLEWLWYD_ADMIN_USER"] ?? "admin",
            adminPassword: env["GLEWLWYD_ADMIN_PASSWORD"] ?? "password",
            serviceClientID: env["GLEWLWYD_SERVICE_CLIENT_ID"] ?? "svc",
            serviceSecret: secret.trimmingCharacters(in: .whitespacesAndNewlines),
            rotatedJWKSFile: env["GLEWLWYD_ROTATED_JWKS_FILE"] ?? "", logFile: env["GLEWLWYD_LOG"] ?? "")
    }()

    static var isConfigured: Bool { shared != nil }

    static func require() throws -> Glewlwyd { try #require(shared, "GLEWLWYD_ISSUER is not set") }

    var api: URL { base.appendingPathComponent("api") }

    /// The plugin with DPoP nonces mandatory (provision.sh's "dpop").
    var dpopIssuer: URL {
        ProcessInfo.processInfo.environment["GLEWLWYD_DPOP_ISSUER"].flatMap(URL.init(string:)) ?? api.appendingPathComponent("dpop")
    }

    /// The plugin that requires pushed authorization requests (provision.sh's "par"; DPoP nonces mandatory).
    var parIssuer: URL {
        ProcessInfo.processInfo.environment["GLEWLWYD_PAR_ISSUER"].flatMap(URL.init(string:)) ?? api.appendingPathComponent("par")
    }

    /// The plugin whose request_uris live 2 s (provision.sh's "parshort").
    var parShortIssuer: URL {
        ProcessInfo.processInfo.environment["GLEWLWYD_PAR_SHORT_ISSUER"].flatMap(URL.init(string:))
            ?? api.appendingPathComponent("parshort")
    }

    /// A public-client configuration for `cli` at the "dpop" plugin, with DPoP on.
    func dpopConfiguration() -> OIDCConfiguration {
        var configuration = configuration(issuer: dpopIssuer)
        configuration.dpop = true
        return configuration
    }

    /// A public-client configuration for the `cli` client.
    func configuration(
        issuer: URL? = nil, margin: Duration = .seconds(60), retry: RetryPolicy = .default, proactive: Bool = false
    ) -> OIDCConfiguration {
        OIDCConfiguration(
            issuer: issuer ?? self.issuer, clientID: clientID, scopes: ["openid"],
            session: SessionManager.Configuration(refreshMargin: margin, retryPolicy: retry, proactiveRefresh: proactive))
    }

    /// The provider's log, from `offset` on.
    func log(from offset: Int = 0) -> String {
        guard let data = FileManager.default.contents(atPath: logFile), data.count >= offset else { return "" }
        return String(decoding: data[offset...], as: UTF8.self)
    }

    /// The log's current size (a marker for `log(from:)`).
    func logSize() -> Int { FileManager.default.contents(atPath: logFile)?.count ?? 0 }

    /// Token grants the provider logged since `offset` for `user` ("Access token generated"
    /// lines: one per successful code, refresh or device exchange), and refused tokens.
    func loggedGrants(since offset: Int, user: String? = nil) -> (issued: Int, refused: Int) {
        let text = log(from: offset)
        let who = user ?? self.user
        let lines = text.split(separator: "\n")
        let issued = lines.filter {
            $0.contains("Access token generated for client '\(clientID)' granted by user '\(who)'")
        }.count
        let refused = lines.filter { $0.contains("Token invalid") }.count
        return (issued, refused)
    }

    /// Tokens the provider logged since `offset` for the service client (client credentials).
    func loggedServiceTokens(since offset: Int) -> Int {
        log(from: offset).split(separator: "\n").filter { $0.contains("Access token generated for client '\(serviceClientID)'") }.count
    }

    /// Waits until the provider's log (written by another process, when it gets to it) shows
    /// `count` of what `logged` counts, polling it; `ceiling` only stops a hang. Returns the
    /// count then: assert on it (more than `count` is a failure the caller sees).
    func waitForLog(_ count: Int, ceiling: Duration = .seconds(30), _ logged: @escaping @Sendable () -> Int) async throws -> Int {
        try await withCeiling(ceiling, "\(count) lines in the provider's log") {
            while logged() < count { try await Task.sleep(for: .milliseconds(20)) }
            return logged()
        }
    }
}

/// Suites that need the provider are enabled only when it is configured.
extension Trait where Self == ConditionTrait {
    static var glewlwyd: ConditionTrait {
        .enabled(if: Glewlwyd.isConfigured, "GLEWLWYD_ISSUER is not set: run scripts/test.sh (it starts glewlwyd)")
    }
}
