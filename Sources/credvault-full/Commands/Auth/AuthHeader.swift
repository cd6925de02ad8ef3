import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `credvault auth header --url URL [--method M]`: the headers that authorize one request
/// with the signed-in session's token, or with `--client-credentials ...` the service token.
enum AuthHeader {
    static func run(_ context: AuthContext) async throws -> Int32 {
        guard let text = context.option("url"), let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", url.host != nil
        else { throw UsageError("header needs --url with an http(s) URL") }
        let method = (context.option("method") ?? "GET").uppercased()
        guard !method.isEmpty, method.allSatisfy({ $0.isASCII && $0.isLetter }) else { throw UsageError("--method takes an HTTP method") }
        let headers: [String: String]
        if context.args.value.flags.contains("client-credentials") {
            headers = try await AuthToken.clientCredentialsClient(context).authorizationHeaders(
                for: url, method: method, resource: try context.resource())
        } else {
            guard let store = try context.openStore(create: false), let profile = try context.profile(in: store) else {
                throw AuthError.notSignedIn
            }
            // A protected resource's token goes to that resource only (as ProtectedResourceClient sends it).
            if let resource = profile.protectedResource.flatMap(URL.init(string:)), !ResourceURI.sameOrigin(url, resource) {
                throw UsageError("--url is not on the protected resource's origin (\(resource.absoluteString)): its token is not sent there")
            }
            headers = try await context.client(profile, store: store).authorizationHeaders(
                for: url, method: method, resource: try context.resource())
        }
        // stdout, "Name: value" lines in a fixed order: what the caller asked for, e.g. for
        // `curl -H @-`. A DPoP proof is single-use: one invocation per request.
        for name in headers.keys.sorted() { context.say("\(name): \(headers[name]!)") }
        return ExitCode.success
    }
}
