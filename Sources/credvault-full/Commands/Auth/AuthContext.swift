import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation
import Logging

/// What every auth action needs: the parsed options, the vault, the stored issuer/client.
struct AuthContext: Sendable {
    let args: SendableArguments
    let io: TerminalIO
    let vault: VaultAccess
    let logger: Logger

    /// Where login remembers which provider and client the session belongs to.
    static let profileKey = CredentialKey(service: "credential-vault.auth", account: "cli profile", label: "credvault auth: provider and client")

    struct Profile: Codable {
        var issuer: String
        var clientID: String
        var scopes: [String]
        /// Whether the session is bound to a DPoP key (`login --dpop`); `nil` in profiles written before.
        var dpop: Bool? = nil
        /// The resources (RFC 8707) asked for at login (`login --resource`); `nil` in profiles written before.
        var resources: [String]? = nil
        /// The protected resource the session's tokens are for (`login --protected-resource`,
        /// the MCP profile: sent as `resource` at every refresh); `nil` otherwise.
        var protectedResource: String? = nil
    }

    init(_ args: ParsedArguments, io: TerminalIO, vault: VaultAccess) throws {
        self.args = SendableArguments(args)
        self.io = io
        self.vault = vault
        logger = try StderrLogHandler.logger(levelOption: args.options["log-level"])
    }

    var json: Bool { args.value.flags.contains("json") }

    func option(_ name: String) -> String? { args.value.options[name] }

    func openStore(create: Bool) throws -> (any TokenStorageBackend)? {
        try vault.openStore(create: create)
    }

    /// The profile from the options, falling back to the one stored at login.
    func profile(in store: any TokenStorageBackend) throws -> Profile? {
        let stored = try store.load(Self.profileKey).flatMap { try? OutsideJSON.decode(Profile.self, from: $0) }
        guard let issuer = option("issuer") ?? stored?.issuer, let clientID = option("client-id") ?? stored?.clientID else {
            return nil
        }
        return Profile(
            issuer: issuer, clientID: clientID, scopes: scopes ?? stored?.scopes ?? ["openid"],
            dpop: args.value.flags.contains("dpop") ? true : stored?.dpop, resources: stored?.resources,
            protectedResource: stored?.protectedResource)
    }

    func save(_ profile: Profile, in store: any TokenStorageBackend) throws {
        try store.save(try JSONEncoder().encode(profile), for: Self.profileKey, options: .default)
    }

    var scopes: [String]? {
        option("scope").map { $0.split(separator: " ").map(String.init) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The `--resource` values (RFC 8707), each an absolute http(s) URI without fragment, in canonical form.
    func resources() throws -> [String] {
        try (args.value.optionValues["resource"] ?? []).map { text in
            guard let url = URL(string: text) else { throw UsageError("--resource takes an absolute http(s) URL") }
            return try ResourceURI.indicator(url)
        }
    }

    /// The one `--resource` of token and header (`nil` when none was given).
    func resource() throws -> URL? {
        let resources = try resources()
        guard resources.count <= 1 else { throw UsageError("--resource is given once here") }
        return resources.first.flatMap(URL.init(string:))
    }

    /// A client for `profile`; `pushedAuthorization` is login's `--par` (sign-in only: nothing
    /// else pushes, so it is not stored in the profile).
    func client(
        _ profile: Profile, store: any TokenStorageBackend, pushedAuthorization: PushedAuthorization = .automatic
    ) async throws -> OIDCClient {
        guard let issuer = URL(string: profile.issuer), issuer.scheme != nil else { throw UsageError("--issuer is not a URL") }
        var configuration = OIDCConfiguration(
            issuer: issuer, clientID: profile.clientID, scopes: profile.scopes,
            session: SessionManager.Configuration(proactiveRefresh: false), dpop: profile.dpop ?? false,
            pushedAuthorization: pushedAuthorization)
        configuration.resources = (profile.resources ?? []).compactMap(URL.init(string:))
        if let resource = profile.protectedResource.flatMap(URL.init(string:)) {
            // The MCP profile's authorization server may publish RFC 8414 metadata only: found
            // the way login found it, then pinned.
            configuration.sessionResource = resource
            configuration.metadata = try await ResourceAuthorizationDiscovery(logger: logger).authorizationServerMetadata(issuer: issuer)
        }
        return try await OIDCClient(configuration: configuration, store: store, logger: logger)
    }

    /// Writes one line to stdout.
    func say(_ line: String) { io.print(line) }
}

/// `ParsedArguments` handed across the async boundary (it is plain value data).
struct SendableArguments: @unchecked Sendable {
    let value: ParsedArguments
    init(_ value: ParsedArguments) { self.value = value }
}

