/// The small page the loopback listener shows in the browser after the redirect.
enum LoopbackPage {
    /// How the sign-in ended.
    enum Outcome: Sendable {
        case success
        case failure(String)
    }

    /// Why a request without the pending sign-in's `state` was refused.
    static let foreign = "this request does not belong to the sign-in in progress (it may come from another program or web page)"

    /// Why a second request for the one-time start page aborts the sign-in.
    static let replayed = "this sign-in link was already used, possibly by another program; the sign-in was stopped for safety"
    /// A pushed (PAR) sign-in request whose request URI expired before the browser got to it.
    static let expired = "this sign-in link expired before it was opened; start the sign-in again"

    static func html(_ outcome: Outcome) -> String {
        let (title, text): (String, String) =
            switch outcome {
            case .success: ("Signed in", "You are signed in. You can close this window and return to the application.")
            case .failure(let why): ("Sign-in failed", "The sign-in failed: \(escape(why)). You can close this window and try again.")
            }
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>\(title)</title></head>
            <body style="font-family: sans-serif; margin: 3em;"><h1>\(title)</h1><p>\(text)</p></body></html>
            """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
