import Foundation

extension LoopbackListener {
    // Internal (not private) so that the redirect fuzz target (Fuzz/RedirectURL) reaches it.
    enum Classification {
        /// A request to the redirect path with a `state` or an `error` (not yet matched).
        case redirect(URL)
        /// A one-time start page (`/start/<token>`).
        case start(String)
        /// Anything else: status line and text to answer.
        case reject(String, String)
    }

    /// Decides what a request head is: the redirect, a start page, or something to refuse.
    func classify(_ head: String) -> Classification {
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .reject("400 Bad Request", "bad request") }
        guard parts[0] == "GET" else { return .reject("405 Method Not Allowed", "method not allowed") }
        var target = String(parts[1])
        if target.lowercased().hasPrefix("http://"), let slash = target.dropFirst(7).firstIndex(of: "/") {
            target = String(target[slash...])
        }
        guard target.hasPrefix("/"), let url = URL(string: "http://127.0.0.1:\(port)\(target)"),
            let requestPath = URLComponents(url: url, resolvingAgainstBaseURL: false)?.path
        else {
            return .reject("400 Bad Request", "bad request")
        }
        if requestPath.hasPrefix("/start/"), requestPath != path {
            return .start(String(requestPath.dropFirst("/start/".count)))
        }
        guard requestPath == path else { return .reject("404 Not Found", "not found") }
        let parameters = FormEncoding.parameters(of: url)
        guard parameters["state"] != nil || parameters["error"] != nil else {
            return .reject("400 Bad Request", "this address only receives sign-in redirects")
        }
        return .redirect(url)
    }
}
