import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `credvault auth login --protected-resource URL`: the MCP client profile. The resource's
/// 401 (or its RFC 9728 well-known URL) names the authorization server; the client is the
/// `--client-id`, else the `--client-metadata-url` when the server accepts metadata documents,
/// else one registered dynamically (kept in the vault, reused by later logins with the same
/// `--port`). The session's tokens all name the resource, so `auth token` and `auth header`
/// serve it afterwards.
enum AuthResourceLogin {
    static func run(_ context: AuthContext, resource text: String, device: Bool) async throws -> Int32 {
        guard !device, context.option("redirect-uri") == nil, context.option("issuer") == nil else {
            throw UsageError("--protected-resource signs in through the browser: not with --device, --redirect-uri or --issuer")
        }
        guard try context.resources().isEmpty else { throw UsageError("--protected-resource and --resource are exclusive") }
        guard let resource = URL(string: text), ["https", "http"].contains(resource.scheme?.lowercased() ?? "") else {
            throw UsageError("--protected-resource takes an absolute http(s) URL")
        }
        var document: URL?
        if let value = context.option("client-metadata-url") {
            guard let url = URL(string: value) else { throw UsageError("--client-metadata-url takes an https URL") }
            document = url
        }
        let options = try AuthLogin.loopbackOptions(context)
        if case .fixed(let number) = options.port { try LoopbackPortConflict.check(resource, "--protected-resource", port: number) }
        guard let store = try context.openStore(create: true) else { return ExitCode.failure }
        let dpop = context.args.value.flags.contains("dpop")
        let configuration = ProtectedResourceConfiguration(
            resource: resource, redirect: LoopbackRedirect(port: options.port), clientID: context.option("client-id"),
            clientMetadataDocument: document, clientName: "credvault", dpop: dpop,
            session: SessionManager.Configuration(proactiveRefresh: false))
        let client = try ProtectedResourceClient(configuration: configuration, store: store, logger: context.logger)
        // A request without a token: its 401 challenge names the metadata (any other answer:
        // the RFC 9728 well-known URL is asked instead).
        let probe = try await DefaultHTTPTransport.make().send(HTTPRequest(url: resource, timeout: configuration.requestTimeout))
        let oidc = try await client.prepare(from: probe.status == 401 ? probe : nil)
        if case .fixed(let number) = options.port { try LoopbackPortConflict.check(try await oidc.metadata(), port: number) }
        let session = try await client.signIn(browser: AuthLogin.browser(context), timeout: options.timeout)
        let profile = AuthContext.Profile(
            issuer: oidc.configuration.issuer.absoluteString, clientID: oidc.configuration.clientID,
            scopes: await client.scopes, dpop: dpop ? true : nil, protectedResource: try ResourceURI.indicator(resource))
        try context.save(profile, in: store)
        try AuthLogin.report(session, context)
        return ExitCode.success
    }
}
