#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What git sends a credential helper (gitcredentials(7), git-credential(1)): `key=value`
/// lines up to an empty line or the end of input.
///
/// Read as git reads it, and stricter where git's input could hurt: a line without `=` is an
/// error (git: "invalid credential line"); a NUL byte anywhere, a request over 64 KiB, or a
/// name that is not UTF-8 is refused; an unknown key (`capability[]`, `wwwauth[]`, `state[]`,
/// `authtype`, future ones) is ignored, as git's helpers do; a key given twice keeps its last
/// value, as git does. Errors never quote the input (it may hold a password).
struct GitCredentialRequest {
    /// The keys this helper reads; any other is ignored.
    static let knownKeys: Set<String> = ["protocol", "host", "path", "username", "password", "password_expiry_utc", "oauth_refresh_token"]
    /// The largest request read.
    static let limit = 65536

    /// The URL scheme (`https`).
    var `protocol`: String?
    /// The host, with `:port` when git has one.
    var host: String?
    /// The repository path (sent by git only with `credential.useHttpPath`).
    var path: String?
    /// The user name.
    var username: String?
    /// The password or token (the caller wipes it).
    var password: Data?
    /// When the password expires, in seconds since 1970 (UTC), as git sends it.
    var passwordExpiry: String?
    /// An OAuth refresh token that goes with the password (the caller wipes it).
    var refreshToken: Data?

    /// Parses `input`. Throws `UsageError` for a malformed request.
    init(parsing input: Data) throws(UsageError) {
        guard !input.contains(0) else { throw UsageError("the credential request holds a NUL byte") }
        for var line in input.split(separator: 0x0A, omittingEmptySubsequences: false) {
            if line.last == 0x0D { line = line.dropLast() }
            if line.isEmpty { break }  // the end of the request
            guard let equals = line.firstIndex(of: 0x3D) else { throw UsageError("the credential request has a line without '='") }
            guard let key = String(validating: line[..<equals], as: UTF8.self) else { continue }
            guard Self.knownKeys.contains(key) else { continue }
            let value = Data(line[(equals + 1)...])
            switch key {
            case "password": password = value
            case "oauth_refresh_token": refreshToken = value
            default:
                guard let text = String(validating: value, as: UTF8.self) else {
                    throw UsageError("the credential request's \(key) is not UTF-8")
                }
                switch key {
                case "protocol": self.protocol = text
                case "host": host = text
                case "path": path = text
                case "username": username = text
                default: passwordExpiry = text.utf8.allSatisfy { (0x30...0x39).contains($0) } && text.utf8.count <= 20 ? text : nil
                }
            }
        }
    }

    /// The service its credentials are kept under: `git:PROTOCOL://HOST`, then `/PATH` when git
    /// sent one; `nil` without a protocol or a host (nothing to match then).
    var service: String? {
        guard let `protocol`, !`protocol`.isEmpty, let host, !host.isEmpty else { return nil }
        return "git:\(`protocol`)://\(host)" + (path.map { $0.isEmpty ? "" : "/" + $0 } ?? "")
    }

    /// Wipes the secrets it holds.
    mutating func wipe() {
        password?.wipe()
        refreshToken?.wipe()
    }
}
