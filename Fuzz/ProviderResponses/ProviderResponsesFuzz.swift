// libFuzzer target for what a provider answers, linked by scripts/fuzz/build.sh against the
// auth module built once for every target (with -enable-testing, so that its internal types
// are reachable). Each input is decoded as:
//   1. a token response (`expires_in` as number or string, range-checked), whose lifetime
//      then drives the background refresh schedule (the `Duration` arithmetic that used to trap);
//   2. a device authorization response (`interval`, `expires_in`);
//   3. provider metadata (discovery), checked against an https and a loopback http issuer;
//   4. an OAuth error body, an InsForge user and error answer, and a stored session value;
//   5. RFC 9728 protected resource metadata, a client registration answer (RFC 7591/7592), and
//      the input as a `WWW-Authenticate` header value.
// Each is decoded as the library decodes it (`OutsideJSON`, which bounds the nesting first).
// Errors and rejections are fine; a crash, a trap, a leak or a hang is a finding.
@testable import CredentialVault
@testable import CredentialVaultAuth
import Foundation

private let seeds = [
    #"{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}"#,
    #"{"access_token":"at","token_type":"bearer","expires_in":"1e17"}"#,
    #"{"access_token":"at","expires_in":-1e308,"id_token":"a.b.c","scope":"openid"}"#,
    #"{"device_code":"dc","user_code":"ABCD","verification_uri":"https://idp.example/device","expires_in":600,"interval":5}"#,
    #"{"device_code":"dc","user_code":"A","verification_url":"x","expires_in":"1e300","interval":"nan"}"#,
    #"{"issuer":"https://idp.example","authorization_endpoint":"https://idp.example/auth","token_endpoint":"https://idp.example/token","jwks_uri":"http://idp.example/jwks","authorization_response_iss_parameter_supported":true}"#,
    #"{"issuer":"http://127.0.0.1:8080","token_endpoint":"http://127.0.0.1:8080/token","userinfo_endpoint":"ftp://x"}"#,
    #"{"resource":"https://mcp.example/mcp","authorization_servers":["https://idp.example"],"scopes_supported":["a"]}"#,
    #"{"client_id":"c","registration_access_token":"t","registration_client_uri":"https://idp.example/register/c","client_secret_expires_at":0}"#,
    #"Bearer realm="x", error="insufficient_scope", scope="a b", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource""#,
    #"DPoP error="use_dpop_nonce", error_description="a \"q\"", algs="ES256", Basic, Negotiate abc=="#,
]
private let registrationEndpoint = URL(string: "https://idp.example/register")!
private let issuers = [URL(string: "https://idp.example")!, URL(string: "http://127.0.0.1:8080")!]

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    writeSeedsIfAsked(seeds.enumerated().map { ("response-\($0)", $1) })
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    if let token = try? OutsideJSON.decode(TokenResponse.self, from: bytes) {
        let session = AuthSession(
            accessToken: token.accessToken, refreshToken: token.refreshToken,
            expiresAt: token.expiresIn.map { now.addingTimeInterval($0) }, obtainedAt: now)
        for failures in [0, 1, 7, 1000] {
            _ = RefreshSchedule(margin: .seconds(60), floor: .seconds(5)).delay(for: session, now: now, failures: failures)
        }
    }
    if let device = try? OutsideJSON.decode(DeviceAuthorizationResponse.self, from: bytes) {
        _ = now.addingTimeInterval(device.expiresIn)
        _ = min(device.interval + .seconds(5), .seconds(300))
    }
    if let metadata = try? OutsideJSON.decode(ProviderMetadata.self, from: bytes) {
        for issuer in issuers {
            _ = EndpointPolicy(issuer: issuer, allowsInsecureHTTP: false).firstRefused(metadata)
            _ = Discovery.namesIssuer(metadata, issuer)
        }
    }
    _ = OAuthErrorBody.parse(bytes)
    _ = InsForgeBackendError(response: HTTPResponse(status: 400, body: bytes))
    _ = try? OutsideJSON.decode(InsForgeUser.self, from: bytes)
    _ = try? OutsideJSON.decode(AuthSession.self, from: bytes, using: .session)
    _ = try? ProtectedResourceMetadata.parse(bytes)
    if let client = try? RegistrationResponse.parse(bytes, endpoint: registrationEndpoint) {
        _ = try? RegistrationResponse.parse(bytes, endpoint: registrationEndpoint, previous: client)
    }
    if let challenges = try? AuthenticationChallenge.parse(String(decoding: bytes, as: UTF8.self)) {
        for challenge in challenges { _ = (challenge.scopes, challenge.resourceMetadata, challenge.algorithms) }
    }
    return 0
}
