import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `credvault auth login|token|header|status|logout`: an OpenID Connect session kept in the vault.
enum AuthCommand: Command {
    static let name = "auth"
    static let summary = Registry.summary(of: name)
    static let help = """
        usage: credvault auth ACTION [OPTIONS] [common options]

        actions:
          login   --issuer URL --client-id ID [--device] [--port N] [--scope "S ..."] [--no-browser] [--dpop] [--par]
                  [--resource URL]...
                  Sign in: in the browser with a loopback redirect on 127.0.0.1 (a free port, or
                  --port N for providers that match redirect URIs exactly; not the port of the
                  issuer or of one of its endpoints on 127.0.0.1), or with --device the
                  device grant (prints the code and the page to visit). --no-browser prints the
                  URL instead of running xdg-open. The session and the issuer/client are stored.
                  --dpop binds the tokens to a key kept with the session (RFC 9449 DPoP).
                  --par pushes the authorization request to the provider first (RFC 9126 PAR;
                  used anyway when the provider requires it): the browser URL then carries only
                  the client id and a short-lived request_uri.
                  --resource URL (repeatable) asks for access to that resource (RFC 8707), so
                  that `token --resource URL` can get a token for it later.
          login   --protected-resource URL [--client-id ID] [--client-metadata-url URL] [--port N] [--dpop]
                  [--no-browser]
                  Sign in for a protected resource (an MCP server; the MCP authorization
                  profile): its 401 names its metadata (RFC 9728) and authorization server; the
                  client is --client-id, else --client-metadata-url (an https URL used as the
                  client id) when the server accepts metadata documents, else a client
                  registered there dynamically (RFC 7591, kept in the vault and reused by later
                  logins with the same --port; providers that match redirects exactly, like
                  glewlwyd, need --port). Every token request names the resource, so `token`
                  and `header` then serve it.
          login   --issuer URL --client-id ID --redirect-uri URI [--no-browser] [--par]
                  Start a sign-in whose redirect goes elsewhere (a custom scheme handled by
                  `credvault auth redirect %u` in a .desktop file): prints the URL and exits.
          redirect URL
                  Complete such a sign-in from the redirect URL (may run in a new process).
          token   [--force-refresh | --resource URL]
                  Print a valid access token (refreshing it first when it expires soon); with
                  --resource, one whose audience is that resource (RFC 8707), kept in the session.
          token   --client-credentials --issuer URL --client-id ID [--scope S] [--resource URL]
                  (--client-secret-file PATH [--client-secret-jwt] | --client-key SERVICE/ACCOUNT
                  | --client-key-file PATH) [--client-key-id KID] [--assertion-audience AUD] [--dpop]
                  Print a client-credentials token for a service (cached in the vault); --dpop
                  binds it to a key cached with it (RFC 9449: send it with `header`).
          header  --url URL [--method M] [--resource URL] [--client-credentials ... as for token]
                  Print the headers that authorize one request to URL with method M (default
                  GET): `Authorization: Bearer ...`, or for a DPoP-bound session `Authorization:
                  DPoP ...` and a single-use `DPoP:` proof. They hold the token: for scripts
                  (e.g. `credvault auth header --url U | curl -H @- U`).
          status  Say who is signed in and until when, and the resources holding a token
                  (exit code 1 when nobody is).
          logout  Delete the session, revoke its tokens, print the provider's end-session URL.

        auth options:
          --issuer URL, --client-id ID   override the stored ones (token, status, logout)
          --timeout SECONDS              how long login waits for the user (default 300)
          --log-level LEVEL              trace, debug, info, warning (default), error, critical
          --device                       in auth commands: use the device grant (the vault is
                                         then opened with the device key unless another key is given)
        client credentials (never a secret or key as an option value):
        """ + "\n" + ClientAuthenticationOptions.help + """


        Exit codes besides the common ones: 1 not signed in, 11 the provider refused (sign in
        again), 12 the provider could not be reached or timed out.

        """ + VaultOptions.help
    static let flags: Set<String> = ["force-refresh", "client-credentials", "no-browser", "client-secret-jwt", "dpop", "par"]
    static let options: Set<String> = Set([
        "issuer", "client-id", "port", "scope", "timeout", "log-level", "redirect-uri", "url", "method", "resource",
        "protected-resource", "client-metadata-url",
    ]).union(ClientAuthenticationOptions.options)

    static func run(_ arguments: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        var args = arguments
        guard !args.positionals.isEmpty else { throw UsageError("expected ACTION (login, token, header, status, logout)") }
        let action = args.positionals.removeFirst()
        let operand = action == "redirect" && !args.positionals.isEmpty ? args.positionals.removeFirst() : nil
        guard args.positionals.isEmpty else { throw UsageError("unexpected argument \(args.positionals[0])") }
        // In auth commands --device selects the device grant, not the vault key (the device
        // key is the default unlock anyway).
        let deviceGrant = args.flags.remove("device") != nil
        var vault = vault
        vault.request.unlock.device = false
        let context = try AuthContext(args, io: io, vault: vault)
        do {
            return try runBlocking {
                switch action {
                case "login": try await AuthLogin.run(context, device: deviceGrant)
                case "redirect": try await AuthLogin.completeRedirect(context, url: operand)
                case "token": try await AuthToken.run(context)
                case "header": try await AuthHeader.run(context)
                case "status": try await AuthStatus.run(context)
                case "logout": try await AuthLogout.run(context)
                default: throw UsageError("unknown action '\(action)' (login, redirect, token, header, status, logout)")
                }
            }
        } catch let error as AuthError {
            io.error(error.description)
            return exitCode(for: error)
        }
    }

    static func exitCode(for error: AuthError) -> Int32 {
        switch error {
        case .notSignedIn: ExitCode.notFound
        case .storage(let storage): ExitCode.of(storage)
        case .networkError, .timedOut, .serverUnavailable, .rateLimited: ExitCode.unreachable
        case .invalidConfiguration: ExitCode.usage
        case .invalidGrant, .invalidCredentials, .accessDenied, .insufficientScope, .stateMismatch, .nonceMismatch, .invalidIDToken,
            .providerError, .authorizationExpired, .pushedAuthorizationRefused, .pushedAuthorizationRequired, .invalidTarget,
            .resourceRefreshWouldNarrow, .refreshTokenNarrowed:
            ExitCode.authFailed
        default: ExitCode.failure
        }
    }
}
