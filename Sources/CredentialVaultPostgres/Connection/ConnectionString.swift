import CLibPQ
import CredentialVault
import Foundation

/// The caller's connection string, checked before any connect, and the secrets it holds, kept
/// out of every message: libpq's own parse errors quote the string (`invalid percent-encoded
/// token: "S3cr%zzet"`, `... in URI: "postgresql://user:password@..."`), and its connect
/// errors could repeat the password where a caller misplaced it.
struct ConnectionString {
    /// What never appears in a message: the string itself and the passwords.
    let secrets: [String]
    /// The password the string holds, if any.
    let password: String?
    /// The keywords that decide the transport (`host`, `hostaddr`, `sslmode`, `service`), as the
    /// string gives them (absent: libpq's environment variables and defaults apply).
    let transport: [String: String]

    /// Parses `conninfo` as libpq will (`PQconninfoParse`): a malformed string is
    /// `invalidArgument`, with libpq's reason stripped of everything it quoted. `password` (one
    /// given apart) is kept out of messages too.
    init(_ conninfo: String, password given: String? = nil) throws(CredentialVaultError) {
        let secrets = [conninfo] + [given].compactMap { $0 }.filter { !$0.isEmpty }
        // A plain database name (no `=`, no URI prefix) is not parsed by libpq either.
        let lowered = conninfo.lowercased()
        guard conninfo.contains("=") || lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") else {
            self.secrets = secrets
            password = nil
            transport = [:]
            return
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            let reason = error.map { String(cString: $0) } ?? "libpq could not parse it"
            if let error { PQfreemem(error) }
            throw .invalidArgument(
                "the PostgreSQL connection string is malformed (\(Self.withoutQuotes(PGFailure.sanitized(reason)))); "
                    + "it is not repeated here, since it may hold a password")
        }
        defer { PQconninfoFree(options) }
        var option = options
        var found: String?
        var transport: [String: String] = [:]
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if let value = option.pointee.val, value.pointee != 0 {
                if name == "password" { found = String(cString: value) }
                if ["host", "hostaddr", "sslmode", "service"].contains(name) { transport[name] = String(cString: value) }
            }
            option += 1
        }
        self.secrets = secrets + [found].compactMap { $0 }
        password = found
        self.transport = transport
    }

    /// `message` with every secret replaced by `(redacted)`.
    func redacting(_ message: String) -> String {
        secrets.sorted { $0.count > $1.count }.reduce(message) { text, secret in
            text.replacingOccurrences(of: secret, with: "(redacted)")
        }
    }

    /// libpq's message with each quoted part (and an unclosed quote's rest) replaced by `"…"`:
    /// what it quotes of a malformed string may be a password.
    static func withoutQuotes(_ message: String) -> String {
        var result = ""
        var quoted = false
        for character in message {
            if character == "\"" {
                if !quoted { result += "\"…\"" }
                quoted.toggle()
            } else if !quoted {
                result.append(character)
            }
        }
        return result
    }
}
