/// How the client authenticates at the token, revocation and device endpoints.
public enum ClientAuthentication: Sendable, Hashable, CustomStringConvertible {
    /// A public client (a desktop or CLI app): only `client_id` is sent. PKCE protects the code.
    case none
    /// A confidential client using HTTP Basic (`client_secret_basic`, the OAuth default).
    case clientSecretBasic(secret: String)
    /// A confidential client sending the secret in the form (`client_secret_post`).
    case clientSecretPost(secret: String)

    /// `true` for the confidential variants.
    public var isConfidential: Bool {
        if case .none = self { return false }
        return true
    }

    /// The method's name; never the secret.
    public var description: String {
        switch self {
        case .none: "none"
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        }
    }

    /// Adds the authentication to a form and its headers.
    func apply(clientID: String, form: inout [(String, String)], headers: inout [String: String]) {
        switch self {
        case .none:
            form.append(("client_id", clientID))
        case .clientSecretBasic(let secret):
            headers["Authorization"] = FormEncoding.basicAuthorization(clientID: clientID, secret: secret)
        case .clientSecretPost(let secret):
            form.append(("client_id", clientID))
            form.append(("client_secret", secret))
        }
    }
}
