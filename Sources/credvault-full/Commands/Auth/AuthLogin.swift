import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `credvault auth login`.
enum AuthLogin {
    static func run(_ context: AuthContext, device: Bool) async throws -> Int32 {
        if let resource = context.option("protected-resource") {
            return try await AuthResourceLogin.run(context, resource: resource, device: device)
        }
        guard let issuer = context.option("issuer"), let clientID = context.option("client-id") else {
            throw UsageError("login needs --issuer URL and --client-id ID (or --protected-resource URL)")
        }
        let (port, timeout) = try loopbackOptions(context)
        // Only the browser sign-in listens (not --device, not --redirect-uri).
        if case .fixed(let number) = port, !device, context.option("redirect-uri") == nil, let url = URL(string: issuer) {
            try LoopbackPortConflict.check(url, "--issuer", port: number)
        }
        // --par forces a pushed authorization request (RFC 9126); without it PAR is still used
        // when the provider's discovery document requires it.
        let par = context.args.value.flags.contains("par")
        if par && device { throw UsageError("--par applies to the browser sign-in, not to --device") }
        guard let store = try context.openStore(create: true) else { return ExitCode.failure }
        let profile = AuthContext.Profile(
            issuer: issuer, clientID: clientID, scopes: context.scopes ?? ["openid"],
            dpop: context.args.value.flags.contains("dpop") ? true : nil, resources: try context.resources())
        let client = try await context.client(profile, store: store, pushedAuthorization: par ? .always : .automatic)
        let io = context.io
        let session: AuthSession
        if let redirectURI = context.option("redirect-uri") {
            let request = try await client.beginAuthorization(redirectURI: redirectURI)
            try await browser(context).open(request.url)
            try context.save(profile, in: store)
            io.error("Waiting for the redirect to \(redirectURI); complete it with: credvault auth redirect URL")
            return ExitCode.success
        } else if device {
            session = try await client.signInWithDevice { authorization in
                var lines = ["To sign in, visit \(authorization.verificationURI.absoluteString) and enter the code \(authorization.userCode)"]
                if let complete = authorization.verificationURIComplete { lines.append("(or open \(complete.absoluteString))") }
                io.error(lines: lines)
            }
        } else {
            if case .fixed(let number) = port { try LoopbackPortConflict.check(try await client.metadata(), port: number) }
            session = try await client.signIn(browser: browser(context), redirect: LoopbackRedirect(port: port), timeout: timeout)
        }
        try context.save(profile, in: store)
        try report(session, context)
        return ExitCode.success
    }

    /// `--port N` (default: a free port) and `--timeout SECONDS` (default 300) of a browser sign-in.
    static func loopbackOptions(_ context: AuthContext) throws -> (port: LoopbackRedirect.Port, timeout: Duration) {
        var port = LoopbackRedirect.Port.ephemeral
        if let text = context.option("port") {
            guard let number = UInt16(text), number > 0 else { throw UsageError("--port takes a port number") }
            port = .fixed(number)
        }
        var timeout = Duration.seconds(300)
        if let text = context.option("timeout") {
            guard let seconds = Int(text), seconds > 0 else { throw UsageError("--timeout takes a positive number of seconds") }
            timeout = .seconds(seconds)
        }
        return (port, timeout)
    }

    /// `credvault auth redirect URL`: completes a sign-in started with `--redirect-uri`.
    static func completeRedirect(_ context: AuthContext, url text: String?) async throws -> Int32 {
        guard let text, let url = URL(string: text), url.scheme != nil else { throw UsageError("expected the redirect URL") }
        guard let store = try context.openStore(create: false), let profile = try context.profile(in: store) else {
            throw AuthError.stateMismatch  // no sign-in was started with this vault
        }
        let session = try await context.client(profile, store: store).handleRedirect(url: url)
        try report(session, context)
        return ExitCode.success
    }

    static func browser(_ context: AuthContext) -> PrintingBrowser {
        context.args.value.flags.contains("no-browser")
            ? PrintingBrowser(io: context.io) : PrintingBrowser(io: context.io, fallbackTo: SystemBrowserOpener())
    }

    static func report(_ session: AuthSession, _ context: AuthContext) throws {
        if context.json {
            let object: [String: Any] = [
                "subject": session.user?.subject ?? "", "email": session.user?.email ?? NSNull(),
                "expires_at": session.expiresAt.map { Int($0.timeIntervalSince1970) } ?? NSNull(),
            ]
            context.io.write(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
        } else {
            context.say("Signed in as \(session.user?.description ?? "unknown user")")
        }
    }
}

/// Prints the sign-in URL on stderr (for SSH sessions and headless machines) and, unless
/// told not to, also asks the desktop to open it.
struct PrintingBrowser: BrowserOpener {
    let io: TerminalIO
    var fallbackTo: SystemBrowserOpener?

    func open(_ url: URL) async throws(AuthError) {
        // A loopback sign-in's URL is a one-time start page: opened twice, it aborts the sign-in.
        let once = url.host == "127.0.0.1" && url.path.hasPrefix("/start/") ? " (it works once)" : ""
        io.error(lines: [
            (fallbackTo == nil ? "Open this URL to sign in" : "Opening the browser; if it does not open, open this URL") + "\(once):",
            url.absoluteString,
        ])
        guard let system = fallbackTo else { return }
        do { try await system.open(url) } catch {
            io.error("(could not start a browser: \(error.description))")
        }
    }
}
