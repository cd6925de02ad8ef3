#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON object of the docker credential-helper protocol (`store`'s input, `get`'s answer),
/// with its field names as docker spells them (decoded as Go decodes it: see
/// `init(decodingAsGoDoes:)`).
struct DockerCredentials: Encodable {
    /// The registry, exactly as docker names it (`https://index.docker.io/v1/`, `ghcr.io`).
    var ServerURL: String
    /// The user name (`<token>` for an identity token).
    var Username: String
    /// The password or identity token.
    var Secret: String

    init(ServerURL: String, Username: String, Secret: String) {
        self.ServerURL = ServerURL
        self.Username = Username
        self.Secret = Secret
    }

    /// The messages docker's client recognises on the helper's stdout (with exit code 1).
    enum Message {
        static let notFound = "credentials not found in native keychain"
        static let missingServerURL = "no credentials server URL"
        static let missingUsername = "no credentials username"
    }

    /// A server URL as every action uses it: without surrounding white space (Go's
    /// `strings.TrimSpace`, Unicode White_Space, which docker's `get` and `erase` apply), so that
    /// `store` keeps a credential exactly where `get` and `erase` look for it.
    static func trimmed(_ serverURL: String) -> String {
        let scalars = serverURL.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    /// The service a registry's credential is kept under: `docker:SERVERURL`.
    static func service(_ serverURL: String) -> String { prefix + serverURL }
    static let prefix = "docker:"
}
