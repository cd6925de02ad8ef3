// libFuzzer target for redirect handling, linked by scripts/fuzz/build.sh against the auth
// module built once for every target (with -enable-testing, so that its internal parsers are
// reachable). Each input is tried as:
//   1. a redirect URL (custom scheme or loopback): query parameters parsed as the sign-in
//      completion does, and compared with registered redirect URIs;
//   2. an HTTP request head arriving at the loopback listener (request line, absolute-form
//      targets, path check, state/error presence).
// Errors and rejections are fine; a crash, a trap, a leak or a hang is a finding.
@testable import CredentialVaultAuth
import Foundation

private let registered = [
    "http://127.0.0.1:53682/callback", "http://[::1]:8080/cb", "com.example.app:/oauth2redirect", "https://app.example.com/auth",
]
private let seeds = [
    "http://127.0.0.1:53682/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=af0ifjsldkj&iss=https%3A%2F%2Fserver.example.com",
    "http://127.0.0.1:53682/callback?error=access_denied&error_description=The%20user%20said%20no&state=xyz",
    "com.example.app:/oauth2redirect?insforge_code=abc&state=s1&state=s2",
    "com.example.app:/oauth2redirect#code=frag&state=f",
    "GET /callback?code=abc&state=xyz HTTP/1.1\r\nHost: 127.0.0.1:53682\r\n\r\n",
    "GET http://127.0.0.1:53682/callback?state=a&code=b HTTP/1.1\r\nHost: x\r\n\r\n",
    "POST /callback HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    "GET /favicon.ico HTTP/1.0\r\n\r\n",
]

private final class Fixture: @unchecked Sendable {
    let listener = try! LoopbackListener(port: .ephemeral, path: "/callback")
}

private let fixture = Fixture()

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    writeSeedsIfAsked(seeds.enumerated().map { ("redirect-\($0)", $1) })
    _ = fixture.listener.port
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let url = URL(string: text) {
        let parameters = FormEncoding.parameters(of: url)
        _ = parameters["state"].map { $0.isEmpty }
        for uri in registered { _ = OIDCClient.sameEndpoint(url, uri) }
    }
    if case .redirect(let url) = fixture.listener.classify(text) {
        _ = FormEncoding.parameters(of: url)
    }
    return 0
}
