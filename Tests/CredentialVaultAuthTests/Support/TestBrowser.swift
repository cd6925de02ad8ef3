import Foundation
import Testing

@testable import CredentialVaultAuth

/// Plays the user's browser against glewlwyd: signs the user in through glewlwyd's API (the
/// session cookie stands in for the login page), gives consent, follows the authorization
/// redirect and delivers it to the redirect URI, approves device codes.
struct TestBrowser: Sendable {
    let provider: Glewlwyd
    let cookie: String
    private let http = URLSessionTransport()

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Signs `user` in at glewlwyd and grants the `cli` client the `openid` scope.
    static func signIn(_ provider: Glewlwyd, user: String? = nil, password: String? = nil) async throws -> TestBrowser {
        let http = URLSessionTransport()
        let body = try JSONSerialization.data(withJSONObject: [
            "username": user ?? provider.user, "password": password ?? provider.password,
        ])
        let response = try await http.send(HTTPRequest(
            method: "POST", url: provider.api.appendingPathComponent("auth/"),
            headers: ["Content-Type": "application/json"], body: body, timeout: .seconds(10)))
        guard response.status == 200, let setCookie = response.headers["set-cookie"],
            let cookie = setCookie.split(separator: ";").first.map(String.init)
        else { throw Failure(description: "glewlwyd login failed: HTTP \(response.status)") }
        let browser = TestBrowser(provider: provider, cookie: cookie)
        let consent = try await browser.request(
            "PUT", provider.api.appendingPathComponent("auth/grant/\(provider.clientID)"),
            body: Data(#"{"scope":"openid"}"#.utf8), json: true)
        guard consent.status == 200 else { throw Failure(description: "consent failed: HTTP \(consent.status)") }
        return browser
    }

    func request(_ method: String, _ url: URL, body: Data? = nil, json: Bool = false) async throws -> HTTPResponse {
        var headers = ["Cookie": cookie]
        if json { headers["Content-Type"] = "application/json" }
        return try await http.send(HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: .seconds(10)))
    }

    /// Visits the authorization URL as the signed-in user and returns where the provider
    /// redirects (the redirect URI with `code` and `state`). `g_continue` tells glewlwyd the
    /// login page was passed, as its own login page does.
    func authorize(_ url: URL) async throws -> URL {
        let authorization = try await Self.followStartPage(url)
        let response = try await request("GET", URL(string: authorization.absoluteString + "&g_continue")!)
        guard response.status == 302, let location = response.headers["location"], let target = URL(string: location) else {
            throw Failure(description: "authorization did not redirect: HTTP \(response.status)")
        }
        return target
    }

    /// Where a loopback listener's one-time start page (`/start/<token>`) redirects; other
    /// URLs as they are.
    static func followStartPage(_ url: URL) async throws -> URL {
        guard url.host == "127.0.0.1", url.path.hasPrefix("/start/") else { return url }
        let response = try await URLSessionTransport().send(HTTPRequest(url: url, timeout: .seconds(10)))
        guard response.status == 302, let location = response.headers["location"], let target = URL(string: location) else {
            throw Failure(description: "the start page answered HTTP \(response.status)")
        }
        return target
    }

    /// Delivers a loopback redirect like a browser: GET it and return status and page.
    func deliver(_ redirect: URL) async throws -> (status: Int, page: String) {
        let response = try await http.send(HTTPRequest(url: redirect, timeout: .seconds(30)))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Enters `userCode` at the device verification page as the signed-in user.
    func approveDevice(userCode: String, issuer: URL) async throws {
        var components = URLComponents(url: issuer.appendingPathComponent("device"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "code", value: userCode), URLQueryItem(name: "g_continue", value: "")]
        let response = try await request("GET", components.url!)
        let location = response.headers["location"] ?? ""
        guard response.status == 302, location.contains("deviceComplete") else {
            throw Failure(description: "device approval failed: HTTP \(response.status)")
        }
    }

    /// Like `opener(pages:)` for a client the test does not know in advance (registered
    /// dynamically during the sign-in): grants the client id and scopes of the authorization
    /// request first, as the user's consent page would.
    func consentingOpener(pages: PageBox) -> ClosureBrowserOpener {
        ClosureBrowserOpener { url in
            let task = Task {
                do {
                    let authorization = try await Self.followStartPage(url)
                    let query = URLComponents(url: authorization, resolvingAgainstBaseURL: false)?.queryItems ?? []
                    guard let clientID = query.first(where: { $0.name == "client_id" })?.value else {
                        throw Failure(description: "the authorization request has no client_id")
                    }
                    // As requested: glewlwyd's grant API takes the scopes space-separated (commas: 401).
                    let scopes = query.first { $0.name == "scope" }?.value ?? "openid"
                    var grant = URLComponents(url: self.provider.api.appendingPathComponent("auth/grant"), resolvingAgainstBaseURL: false)!
                    grant.percentEncodedPath += "/" + (clientID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? clientID)
                    let consent = try await self.request(
                        "PUT", grant.url!, body: try JSONSerialization.data(withJSONObject: ["scope": scopes]), json: true)
                    guard consent.status == 200 else { throw Failure(description: "consent failed: HTTP \(consent.status)") }
                    let redirect = try await self.authorize(authorization)
                    pages.set(.success(try await self.deliver(redirect)))
                } catch {
                    pages.set(.failure(error))
                }
            }
            pages.setTask(task)
        }
    }

    /// A browser opener that runs the whole browser side in the background (as `xdg-open`
    /// returns at once): authorize, then deliver the redirect to the loopback listener.
    /// The page the listener answered is handed to `pages`.
    func opener(pages: PageBox) -> ClosureBrowserOpener {
        ClosureBrowserOpener { url in
            let task = Task {
                do {
                    let redirect = try await self.authorize(url)
                    let page = try await self.deliver(redirect)
                    pages.set(.success(page))
                } catch {
                    pages.set(.failure(error))
                }
            }
            pages.setTask(task)
        }
    }
}
