import Foundation

extension LoopbackListener {
    /// The loopback sign-in's browser step: starts waiting for the redirect with `state`,
    /// opens the browser at a one-time start URL that redirects to `authorizationURL` (so no
    /// command line carries it), and returns the arrival. With `openBy` (a PAR request URI's
    /// expiry) the start page must be opened by then: later, or never, the wait ends with
    /// `authorizationExpired`.
    func openAndWait(
        authorizationURL: URL, state: String, browser: any BrowserOpener, timeout: Duration,
        openBy: ContinuousClock.Instant? = nil
    ) async throws(AuthError) -> LoopbackArrival {
        let start = startURL(redirectingTo: authorizationURL, openBy: openBy)
        async let arrival = waitForRedirect(state: state, timeout: timeout)
        try await browser.open(start)
        do { return try await arrival } catch { throw (error as? AuthError) ?? .cancelled }
    }
}
