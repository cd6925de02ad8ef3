import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `auth login --port N` listens for the redirect on 127.0.0.1:N. An issuer, or an endpoint the
/// sign-in calls (or sends the browser to), on that same loopback address and port would reach
/// that listener instead of the provider: discovery would wait out its timeout and then report
/// the provider as unreachable, which sends the user looking in the wrong place. Such a login is
/// refused before anything listens or connects, as the usage error it is.
enum LoopbackPortConflict {
    /// Refuses `url` (the option or endpoint `what`) when it is on 127.0.0.1:`port`.
    static func check(_ url: URL, _ what: String, port: UInt16) throws {
        guard sharesListener(url, port: port) else { return }
        throw UsageError(
            "\(what) \(url.absoluteString) is on 127.0.0.1 port \(port), where --port \(port) would listen for the redirect: the sign-in would call its own listener; choose another --port")
    }

    /// Refuses the discovered endpoints the sign-in uses (authorization, token, keys, user
    /// info) when one is on 127.0.0.1:`port`.
    static func check(_ metadata: ProviderMetadata, port: UInt16) throws {
        let endpoints: [(String, URL?)] = [
            ("the provider's authorization endpoint", metadata.authorizationEndpoint),
            ("the provider's token endpoint", metadata.tokenEndpoint),
            ("the provider's key set (jwks_uri)", metadata.jwksURI),
            ("the provider's userinfo endpoint", metadata.userinfoEndpoint),
        ]
        for case let (what, url?) in endpoints { try check(url, what, port: port) }
    }

    /// Whether `url` names the listener's address: host 127.0.0.1 or localhost (which resolves
    /// to it), and `port`, explicit or the scheme's default.
    static func sharesListener(_ url: URL, port: UInt16) -> Bool {
        guard let host = url.host?.lowercased(), ["127.0.0.1", "localhost", "localhost."].contains(host) else { return false }
        let effective = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return effective == Int(port)
    }
}
