/// How a provider serves resource indicators (RFC 8707) from a session's refresh token, as
/// `SessionRefresher.resourceIndicators` declares it; see `ResourceChainRules`.
public enum ResourceIndicatorSupport: Sendable, Hashable {
    /// No resource indicators: `accessToken(for:)` is `unsupported`, and nothing is spent.
    case unsupported
    /// Resource indicators; a refresh token rotated in answer to a refresh for one resource
    /// may be valid for that resource only (glewlwyd 2.7.5 does this), so a rotating chain is
    /// never spent on a resource. The safe default.
    case rotatedTokensMayNarrow
    /// Resource indicators; a rotated refresh token keeps every resource of the grant (RFC 6749
    /// section 6), so a rotating chain serves every resource. Declare it only for a provider
    /// known to behave so: on one that narrows, the main token would become a resource's.
    case rotatedTokensKeepResources
}
