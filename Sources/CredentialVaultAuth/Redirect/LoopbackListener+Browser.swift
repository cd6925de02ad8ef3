import Foundation

extension LoopbackListener {
    /// The loopback sign-in's browser step: starts waiting for the redirect with `state`,
    /// opens the browser at a one-time start URL that redirects to `authorizationURL` (so no
    /// command line carries it), and returns the arrival.
    func openAndWait(
        authorizationURL: URL, state: String, browser: any BrowserOpener, timeout: Duration
    ) async throws(AuthError) -> LoopbackArrival {
        let start = startURL(redirectingTo: authorizationURL)
        async let arrival = waitForRedirect(state: state, timeout: timeout)
        try await browser.open(start)
        do { return try await arrival } catch { throw (error as? AuthError) ?? .cancelled }
    }
}
