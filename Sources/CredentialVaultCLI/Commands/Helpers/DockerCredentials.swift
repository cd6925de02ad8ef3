#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON object of the docker credential-helper protocol (`store`'s input, `get`'s answer),
/// with its field names as docker spells them.
struct DockerCredentials: Codable {
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

    /// A missing field reads as empty, as Go's decoder leaves it in docker's own helpers, so
    /// that it is reported with the protocol's message ("no credentials username"); a field of
    /// another type is an error.
    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        ServerURL = try fields.decodeIfPresent(String.self, forKey: .ServerURL) ?? ""
        Username = try fields.decodeIfPresent(String.self, forKey: .Username) ?? ""
        Secret = try fields.decodeIfPresent(String.self, forKey: .Secret) ?? ""
    }

    /// The messages docker's client recognises on the helper's stdout (with exit code 1).
    enum Message {
        static let notFound = "credentials not found in native keychain"
        static let missingServerURL = "no credentials server URL"
        static let missingUsername = "no credentials username"
    }

    /// The service a registry's credential is kept under: `docker:SERVERURL`.
    static func service(_ serverURL: String) -> String { prefix + serverURL }
    static let prefix = "docker:"
}
