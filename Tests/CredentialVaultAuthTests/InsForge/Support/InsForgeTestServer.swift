import Logging
import CredentialVault
import CredentialVaultAuth
import Foundation
import Testing

/// The local InsForge test server (`Tests/Servers/insforge/server.py`) at `$INSFORGE_TEST_URL`
/// (`scripts/services/insforge.sh start` prints the line; `scripts/test.sh` exports it): one
/// isolated instance per test, driven through its `/__test__/` endpoints: configuration, the
/// e-mails it "sent", counters, expiring and revoking tokens, deleting users.
struct InsForgeTestServer: Sendable {
    /// The server's base URL, when the environment names one.
    static let configuredURL: URL? = ProcessInfo.processInfo.environment["INSFORGE_TEST_URL"].flatMap(URL.init(string:))

    let base: URL
    let http = URLSessionTransport()

    /// A new isolated instance of the server (its own users, configuration, counters and
    /// clock, at `<server>/i/<id>`), configured with `config`: tests run in parallel.
    static func fresh(_ config: JSONValue = [:]) async throws -> InsForgeTestServer {
        let root = InsForgeTestServer(base: try #require(configuredURL, "INSFORGE_TEST_URL is not set"))
        let instance = try await root.post("/__test__/instances", config)
        return InsForgeTestServer(base: try #require(instance["url"]?.stringValue.flatMap(URL.init(string:))))
    }

    /// Changes the server's configuration (keys of `state.CONFIG_SCHEMA`).
    func configure(_ config: JSONValue) async throws {
        _ = try await post("/__test__/config", config)
    }

    /// The newest e-mail sent to `email` (of one `type`): `code`, `token`, `link`, ...
    func lastEmail(to email: String, type: String? = nil) async throws -> JSONValue {
        var query = [URLQueryItem(name: "email", value: email)]
        if let type { query.append(URLQueryItem(name: "type", value: type)) }
        return try await get("/__test__/last-email", query: query)
    }

    /// The 6-digit code of the newest e-mail of `type` sent to `email`.
    func code(sentTo email: String, type: String) async throws -> String {
        try #require(try await lastEmail(to: email, type: type)["code"]?.stringValue)
    }

    /// Requests per contract operation since the last reset (`refresh`, `sessions`, ...).
    func stats() async throws -> [String: Int] {
        let object = try #require(try await get("/__test__/stats").objectValue)
        return object.compactMapValues { $0.numberValue.map { Int($0) } }
    }

    /// Zeroes the counters and the request log.
    func resetStats() async throws { _ = try await post("/__test__/stats/reset") }

    /// The contract requests received since the last reset: method, path, query, status.
    func requests() async throws -> [JSONValue] {
        try #require(try await get("/__test__/requests")["requests"]?.arrayValue)
    }

    /// The server's own clock (real time plus however far `/__test__/clock` moved it), to the
    /// millisecond.
    func now() async throws -> Date {
        let text = try #require(try await post("/__test__/clock", ["advanceSeconds": 0])["now"]?.stringValue)
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return try format.parse(text)
    }

    /// Makes every access token issued so far answer 401, as expired ones do.
    func expireAccessTokens() async throws { _ = try await post("/__test__/expire-access-tokens") }

    /// Makes `/refresh` refuse every refresh token issued so far.
    func revokeRefreshTokens() async throws { _ = try await post("/__test__/revoke-refresh-tokens") }

    /// Deletes a user behind the client's back.
    func deleteUser(_ email: String) async throws { _ = try await post("/__test__/delete-user", ["email": .string(email)]) }

    /// A GET that does not follow redirects (to see where a link would send the browser).
    func fetch(_ url: URL) async throws -> HTTPResponse {
        try await http.send(HTTPRequest(method: "GET", url: url, timeout: .seconds(10)))
    }

    private func get(_ path: String, query: [URLQueryItem] = []) async throws -> JSONValue {
        var components = try #require(URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false))
        if !query.isEmpty { components.queryItems = query }
        let response = try await fetch(try #require(components.url))
        try #require(response.status == 200, "GET \(path) answered \(response.status)")
        return try JSONValue.parse(response.body)
    }

    private func post(_ path: String, _ body: JSONValue = [:]) async throws -> JSONValue {
        let request = HTTPRequest(
            method: "POST", url: base.appendingPathComponent(path), headers: ["Content-Type": "application/json"],
            body: try JSONEncoder().encode(body), timeout: .seconds(10))
        let response = try await http.send(request)
        try #require(response.status == 200, "POST \(path) answered \(response.status)")
        return try JSONValue.parse(response.body)
    }

    // MARK: - Clients

    /// A client of this server. Background refresh is off so that refresh counts are exact.
    func client(
        store: any AsyncTokenStorageAdapter = InMemoryStore(), clientType: InsForgeClientType = .desktop, anonKey: String? = nil,
        session: SessionManager.Configuration = .init(proactiveRefresh: false), transport: any HTTPTransport = URLSessionTransport(),
        clock: any CredentialClock = SystemClock(), logger: Logger = .credentialVaultSilent
    ) async throws -> InsForgeClient {
        try await InsForgeClient(
            configuration: InsForgeConfiguration(baseURL: base, clientType: clientType, anonKey: anonKey, session: session),
            store: store, transport: transport, clock: clock, logger: logger)
    }

    /// A fresh unique e-mail address.
    static func email(_ who: String = "user") -> String { "\(who)-\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// A password that meets the server's default policy.
    static let password = "correct-horse-battery-1"
}

/// Every end-to-end suite of the InsForge client hangs under this one (each test has its own
/// server instance, so they run in parallel).
@Suite(
    "InsForge client against the local test server",
    .enabled(if: InsForgeTestServer.configuredURL != nil, "INSFORGE_TEST_URL is not set (scripts/services/insforge.sh start)"))
struct InsForgeEndToEnd {}
