import Foundation

/// Removes secrets from text before it is logged or put into an error: JWTs, long opaque
/// tokens, `Bearer`/`Basic` credentials and the values of sensitive URL or form parameters
/// (`code`, `state`, `nonce`, `code_verifier`, `*token*`, `client_secret`, `password`, ...).
public enum Redactor {
    /// Parameter names whose values are always redacted.
    public static let sensitiveNames: Set<String> = [
        "code", "state", "nonce", "code_verifier", "code_challenge", "access_token", "refresh_token",
        "id_token", "token", "device_code", "user_code", "client_secret", "password", "secret",
        "assertion", "id_token_hint", "authorization", "cookie", "otp",
        // camelCase JSON members (InsForge): matched case-insensitively.
        "accesstoken", "refreshtoken", "csrftoken", "newpassword",
    ]

    /// The replacement text.
    public static let mask = "[REDACTED]"

    /// `text` with every secret-looking part replaced by `[REDACTED]`.
    public static func redact(_ text: String) -> String {
        var output = text
        output = replaceParameterValues(in: output)
        output = replace(#"(?i)\b(Bearer|Basic|DPoP)\s+[A-Za-z0-9._~+/=-]+"#, in: output, with: "$1 \(mask)")
        // JWTs (three base64url segments) and any long opaque token-like run.
        output = replace(#"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"#, in: output, with: mask)
        output = replace(#"(?<![A-Za-z0-9_/.-])[A-Za-z0-9_+=-]{24,}(?![A-Za-z0-9_/.-])"#, in: output, with: mask)
        return output
    }

    /// A provider-supplied text, redacted and cut to at most `limit` characters.
    static func providerText(_ text: String?, limit: Int = 200) -> String? {
        guard let text, !text.isEmpty else { return nil }
        let redacted = redact(text)
        return redacted.count > limit ? String(redacted.prefix(limit)) + "..." : redacted
    }

    /// A URL for logs: scheme, host, port and path only (the query and fragment carry codes and state).
    public static func describe(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        let hadQuery = parts.query != nil || parts.fragment != nil
        parts.query = nil
        parts.fragment = nil
        parts.user = nil
        parts.password = nil
        return (parts.string ?? "<url>") + (hadQuery ? "?[REDACTED]" : "")
    }

    private static func replaceParameterValues(in text: String) -> String {
        let names = sensitiveNames.sorted { $0.count > $1.count }
            .map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|")
        // name=value (URL / form) and "name": "value" (JSON)
        var output = replace(#"(?i)\b((?:[A-Za-z_]*_)?(?:\#(names)))=([^&\s"']+)"#, in: text, with: "$1=\(mask)")
        output = replace(#"(?i)"((?:[A-Za-z_]*_)?(?:\#(names)))"\s*:\s*"[^"]*""#, in: output, with: "\"$1\": \"\(mask)\"")
        return output
    }

    private static func replace(_ pattern: String, in text: String, with template: String) -> String {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return text }
        let range = NSRange(text.startIndex..., in: text)
        return regex.stringByReplacingMatches(in: text, range: range, withTemplate: template)
    }
}
