import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `credvault auth token`.
enum AuthToken {
    static func run(_ context: AuthContext) async throws -> Int32 {
        let args = context.args.value
        if args.flags.contains("client-credentials") { return try await clientCredentials(context) }
        guard let store = try context.openStore(create: false), let profile = try context.profile(in: store) else {
            throw AuthError.notSignedIn
        }
        let client = try await context.client(profile, store: store)
        if let resource = try context.resource() {
            guard !args.flags.contains("force-refresh") else { throw UsageError("--force-refresh does not go with --resource") }
            context.say(try await client.accessToken(for: resource))
        } else {
            context.say(try await client.getAccessToken(forceRefresh: args.flags.contains("force-refresh")))
        }
        if try await client.sessions.storedSession()?.isDPoPBound == true {
            // On stderr: scripts read the token from stdout, people read this.
            context.io.error("this token is DPoP-bound: it works only with a proof; use `credvault auth header --url URL --method M`")
        }
        return ExitCode.success
    }

    static func clientCredentials(_ context: AuthContext) async throws -> Int32 {
        let client = try await clientCredentialsClient(context)
        context.say(try await client.accessToken(
            forceRefresh: context.args.value.flags.contains("force-refresh"), resource: try context.resource()))
        if context.args.value.flags.contains("dpop") {
            // On stderr: scripts read the token from stdout, people read this.
            context.io.error("this token is DPoP-bound: it works only with a proof; use `credvault auth header --client-credentials ... --url URL --method M`")
        }
        return ExitCode.success
    }

    /// The service client of `--client-credentials` (issuer, client id, its secret or key,
    /// scopes, `--dpop`), its token cached in the vault.
    static func clientCredentialsClient(_ context: AuthContext) async throws -> ClientCredentialsClient {
        guard let issuerText = context.option("issuer"), let issuer = URL(string: issuerText),
            let clientID = context.option("client-id")
        else { throw UsageError("--client-credentials needs --issuer, --client-id and a client secret or key") }
        // A secret or key file is checked before the vault is opened (a loose file is refused
        // first); a key in the vault needs the vault open.
        let authentication: ClientAuthentication
        let store: any TokenStorageBackend
        if context.option("client-key") == nil {
            authentication = try await ClientAuthenticationOptions.resolve(context, store: nil)
            guard let opened = try context.openStore(create: true) else { throw CredentialVaultError.notAvailable("the vault could not be opened") }
            store = opened
        } else {
            guard let opened = try context.openStore(create: true) else { throw CredentialVaultError.notAvailable("the vault could not be opened") }
            store = opened
            authentication = try await ClientAuthenticationOptions.resolve(context, store: opened)
        }
        var configuration = OIDCConfiguration(issuer: issuer, clientID: clientID, clientAuthentication: authentication)
        configuration.dpop = context.args.value.flags.contains("dpop")
        return try ClientCredentialsClient(
            configuration: configuration, scopes: context.scopes ?? [], store: store, logger: context.logger,
            // A store shared by hosts (the fleet store) cannot keep it device-only: there the
            // service token is shared by design.
            storageOptions: store.capabilities.supportsDeviceOnly ? .default : .portable)
    }
}

/// `credvault auth status`.
enum AuthStatus {
    static func run(_ context: AuthContext) async throws -> Int32 {
        guard let store = try context.openStore(create: false), let profile = try context.profile(in: store),
            let session = try await context.client(profile, store: store).sessions.storedSession()
        else {
            if context.json { context.say(#"{"signed_in":false}"#) } else { context.say("Not signed in") }
            return ExitCode.notFound
        }
        let expired = session.expiresAt.map { $0 <= Date() } ?? false
        // Resources and their tokens' expiry, never the tokens.
        let resources = session.resourceTokens.sorted { $0.key < $1.key }
        if context.json {
            let object: [String: Any] = [
                "signed_in": true, "issuer": profile.issuer, "client_id": profile.clientID,
                "subject": session.user?.subject ?? "", "email": session.user?.email ?? NSNull(),
                "expires_at": session.expiresAt.map { Int($0.timeIntervalSince1970) } ?? NSNull(),
                "access_token_expired": expired, "refreshable": session.refreshToken != nil, "dpop_bound": session.isDPoPBound,
                "resources": resources.map { resource, token -> [String: Any] in
                    ["resource": resource, "expires_at": token.expiresAt.map { Int($0.timeIntervalSince1970) } ?? NSNull()]
                },
            ]
            context.io.write(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
        } else {
            context.say("Signed in as \(session.user?.description ?? "unknown user") at \(profile.issuer) (client \(profile.clientID))")
            if let expiry = session.expiresAt {
                context.say("Access token \(expired ? "expired" : "valid until") \(ISO8601DateFormatter().string(from: expiry))"
                    + (session.refreshToken != nil ? "; refreshable" : "; not refreshable")
                    + (session.isDPoPBound ? "; DPoP-bound" : ""))
            }
            for (resource, token) in resources {
                context.say("Token for resource \(resource): " + (token.expiresAt.map {
                    "\($0 <= Date() ? "expired" : "valid until") \(ISO8601DateFormatter().string(from: $0))"
                } ?? "no known expiry"))
            }
        }
        return ExitCode.success
    }
}

/// `credvault auth logout`.
enum AuthLogout {
    static func run(_ context: AuthContext) async throws -> Int32 {
        guard let store = try context.openStore(create: false), let profile = try context.profile(in: store) else {
            context.say("Not signed in")
            return ExitCode.success
        }
        let result = try await context.client(profile, store: store).signOut(includeIDTokenHint: false)
        if !result.hadSession {
            context.say("Not signed in")
        } else if result.revoked {
            context.say("Signed out; the tokens were revoked at the provider")
        } else {
            context.say("Signed out locally; revocation: \(result.revocationError?.description ?? "not attempted")")
        }
        if let url = result.endSessionURL, result.hadSession {
            context.say("To also end the provider's browser session, open: \(url.absoluteString)")
        }
        return ExitCode.success
    }
}
