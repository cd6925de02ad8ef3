import Foundation

/// `application/x-www-form-urlencoded` and URL query encoding as OAuth uses it (RFC 6749 App. B).
enum FormEncoding {
    private static let unreserved: CharacterSet = {
        var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        set.insert(charactersIn: "-._~")
        return set
    }()

    /// Percent-encodes everything but the unreserved characters.
    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `name=value&...` in the given order.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// The body bytes of a form.
    static func body(_ pairs: [(String, String)]) -> Data { Data(encode(pairs).utf8) }

    /// Appends query parameters to `url`, keeping the ones already there.
    static func url(_ url: URL, adding pairs: [(String, String)]) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + encode(pairs)
        return components.url
    }

    /// The query (or, when `fragment` is set, fragment) parameters of a URL; later duplicates win.
    static func parameters(of url: URL) -> [String: String] {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return [:] }
        var result: [String: String] = [:]
        for item in components.queryItems ?? [] { result[item.name] = item.value ?? "" }
        return result
    }

    /// HTTP Basic credentials as RFC 6749 §2.3.1 asks: id and secret form-encoded first.
    static func basicAuthorization(clientID: String, secret: String) -> String {
        let raw = "\(escape(clientID)):\(escape(secret))"
        return "Basic " + Data(raw.utf8).base64EncodedString()
    }
}
