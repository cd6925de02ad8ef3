import Foundation

@testable import CredentialVaultAuth

/// glewlwyd's admin API, for the key-rotation test.
struct GlewlwydAdmin: Sendable {
    let provider: Glewlwyd
    let cookie: String
    private let http = URLSessionTransport()

    static func signIn(_ provider: Glewlwyd) async throws -> GlewlwydAdmin {
        let body = try JSONSerialization.data(withJSONObject: ["username": provider.adminUser, "password": provider.adminPassword])
        let response = try await URLSessionTransport().send(HTTPRequest(
            method: "POST", url: provider.api.appendingPathComponent("auth/"),
            headers: ["Content-Type": "application/json"], body: body, timeout: .seconds(10)))
        guard response.status == 200, let cookie = response.headers["set-cookie"]?.split(separator: ";").first else {
            throw TestBrowser.Failure(description: "admin login failed: HTTP \(response.status)")
        }
        return GlewlwydAdmin(provider: provider, cookie: String(cookie))
    }

    private func call(_ method: String, _ path: String, _ body: Data? = nil) async throws -> HTTPResponse {
        var headers = ["Cookie": cookie]
        if body != nil { headers["Content-Type"] = "application/json" }
        return try await http.send(HTTPRequest(
            method: method, url: provider.api.appendingPathComponent(path), headers: headers, body: body,
            timeout: .seconds(10)))
    }

    /// Switches the `oidc` plugin to the rotated JWKS (new key first: glewlwyd signs with it)
    /// and returns the plugin's previous definition.
    func rotateSigningKey(to keyID: String) async throws -> Data {
        let current = try await call("GET", "mod/plugin/oidc")
        guard current.status == 200, var plugin = try JSONSerialization.jsonObject(with: current.body) as? [String: Any],
            var parameters = plugin["parameters"] as? [String: Any]
        else { throw TestBrowser.Failure(description: "cannot read the oidc plugin") }
        parameters["jwks-private"] = try String(contentsOfFile: provider.rotatedJWKSFile, encoding: .utf8)
        parameters["default-kid"] = keyID
        parameters["jwt-type"] = "rsa"
        plugin["parameters"] = parameters
        let updated = try await call("PUT", "mod/plugin/oidc", try JSONSerialization.data(withJSONObject: plugin))
        guard updated.status == 200 else { throw TestBrowser.Failure(description: "rotation refused: HTTP \(updated.status)") }
        try await reload()
        return current.body
    }

    /// Puts a plugin definition back.
    func restorePlugin(_ definition: Data) async throws {
        let response = try await call("PUT", "mod/plugin/oidc", definition)
        guard response.status == 200 else { throw TestBrowser.Failure(description: "restore refused: HTTP \(response.status)") }
        try await reload()
    }

    /// glewlwyd keeps the plugin's keys loaded until the plugin instance is reset.
    private func reload() async throws {
        let response = try await call("PUT", "mod/plugin/oidc/reset")
        guard response.status == 200 else { throw TestBrowser.Failure(description: "plugin reset refused: HTTP \(response.status)") }
    }

    /// The token with its header's `kid` replaced (the signature no longer matters: no key has that id).
    static func replacingKeyID(in token: String, with keyID: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = try? Base64URL.decode(String(parts[0])),
            var object = try? JSONSerialization.jsonObject(with: header) as? [String: Any]
        else { return nil }
        object["kid"] = keyID
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return nil }
        return Base64URL.encode(data) + "." + parts[1] + "." + parts[2]
    }
}
