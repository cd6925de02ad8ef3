import Foundation

extension ResponseLimit {
    /// A client registration or RFC 7592 management answer (64 KiB: metadata and a JWK Set).
    static let registration = 64 * 1024
}

/// Reads a registration endpoint's answer (RFC 7591 §3.2.1, RFC 7592 §3) as hostile input:
/// strict JSON (duplicate members refused), bounded sizes, types checked, and a management URI
/// only on the registration endpoint's own origin (it receives the registration access token).
enum RegistrationResponse {
    /// The longest identifier or secret accepted.
    static let maximumValueLength = 4096

    /// The registered client in `body`; `previous` supplies what RFC 7592 lets a read or
    /// update answer leave out (glewlwyd's GET omits the token and the URI).
    static func parse(_ body: Data, endpoint: URL, previous: RegisteredClient? = nil) throws(AuthError) -> RegisteredClient {
        guard body.count <= ResponseLimit.registration else { throw ResponseLimit.exceeded(ResponseLimit.registration) }
        let json: JSONValue
        do { json = try JSONValue.parse(body) } catch { throw .invalidResponse("the registration response is not valid JSON") }
        guard case .object(var members) = json else { throw .invalidResponse("the registration response is not a JSON object") }
        let clientID = try string(members, "client_id") ?? previous?.clientID
        guard let clientID, !clientID.isEmpty else { throw .invalidResponse("the registration response has no client_id") }
        if let previous, previous.clientID != clientID {
            throw .invalidResponse("the registration response names another client")
        }
        let secret = try string(members, "client_secret").map(RegistrationSecret.init)
        let token = try string(members, "registration_access_token").map(RegistrationSecret.init)
        var managementURI: URL?
        if let text = try string(members, "registration_client_uri") {
            guard let url = URL(string: text), ResourceURI.sameOrigin(url, endpoint) else {
                throw .invalidResponse("the registration_client_uri is not on the registration endpoint's origin")
            }
            managementURI = url
        }
        let expiresAt = try date(members, "client_secret_expires_at")
        let issuedAt = try date(members, "client_id_issued_at")
        for name in ["client_secret", "registration_access_token"] { members[name] = nil }
        return RegisteredClient(
            clientID: clientID, clientSecret: secret ?? previous?.clientSecret,
            clientSecretExpiresAt: expiresAt ?? (secret == nil ? previous?.clientSecretExpiresAt : nil),
            clientIDIssuedAt: issuedAt ?? previous?.clientIDIssuedAt,
            registrationAccessToken: token ?? previous?.registrationAccessToken,
            registrationClientURI: managementURI ?? previous?.registrationClientURI, registrationEndpoint: endpoint,
            metadata: .object(members))
    }

    /// A string member: absent or null is `nil`, another type or an oversized value an error.
    static func string(_ members: [String: JSONValue], _ name: String) throws(AuthError) -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let value)?:
            guard value.utf8.count <= maximumValueLength, !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw .invalidResponse("the registration response's \(name) is malformed")
            }
            return value
        default: throw .invalidResponse("the registration response's \(name) is not a string")
        }
    }

    /// A NumericDate member (seconds since 1970); 0 means "never" (RFC 7591 §3.2.1).
    static func date(_ members: [String: JSONValue], _ name: String) throws(AuthError) -> Date? {
        switch members[name] {
        case nil, .null?: return nil
        case .number(let seconds)? where seconds >= 0 && seconds < 1e11:
            return seconds == 0 ? nil : Date(timeIntervalSince1970: seconds)
        default: throw .invalidResponse("the registration response's \(name) is not a time")
        }
    }

}
