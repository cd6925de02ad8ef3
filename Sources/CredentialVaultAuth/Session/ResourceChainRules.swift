/// When a session's one refresh token may be used for a resource's access token (RFC 8707),
/// and what a refresh's answer teaches about the chain. A pure decision function.
///
/// The model. RFC 6749 section 6 keeps a rotated refresh token's scope, and RFC 8707 lets a
/// client refresh with `resource=` to get a token for one resource from a refresh token that
/// covers several. glewlwyd 2.7.5 with rotation (`refresh-token-one-use: always`) instead
/// narrows the rotated refresh token to the resource asked for: the next refresh without a
/// resource returns that resource's token. A client cannot tell: refresh tokens are opaque and
/// access tokens need not be JWTs. So a refresh token rotated in answer to a refresh for
/// resource A is taken to be A's only:
/// - a chain known to rotate is never used for a resource (the one refresh token would be
///   spent and narrowed); the session stays as it was;
/// - a chain whose rotation is unknown learns it first with a refresh of the main token;
/// - a chain known not to rotate serves every resource;
/// - a chain that rotated anyway in a resource's refresh serves that resource only: the main
///   token is never refreshed from it (it could come back as that resource's token and be sent
///   to any URL), nor another resource's token (it would be the wrong audience).
/// A provider declared to keep a rotated refresh token's resources
/// (`ResourceIndicatorSupport.rotatedTokensKeepResources`, RFC 6749 section 6 followed) is
/// taken at its word: its chain serves every resource whether it rotates or not, and is never
/// taken as narrowed.
enum ResourceChainRules {
    /// What to do before refreshing.
    enum Decision: Equatable {
        /// Refresh as asked.
        case refresh
        /// First refresh the main token to learn whether the chain rotates, then decide again.
        case learnRotationFirst
        /// Do not spend the refresh token: it would narrow the chain to this resource.
        case refuseWouldNarrow(resource: String)
        /// Do not spend the refresh token: it may be valid for this resource only.
        case refuseNarrowed(to: String)
    }

    /// Before a refresh for `resource` (an indicator; `nil`: the main token).
    static func decide(_ chain: RefreshChain?, resource: String?, keepsResources: Bool = false) -> Decision {
        let chain = chain ?? RefreshChain()
        if let narrowed = chain.narrowedTo {
            return narrowed == resource ? .refresh : .refuseNarrowed(to: narrowed)
        }
        guard let resource, !keepsResources else { return .refresh }
        switch chain.rotates {
        case nil: return .learnRotationFirst
        case true?: return .refuseWouldNarrow(resource: resource)
        case false?: return .refresh
        }
    }

    /// The chain after a refresh for `resource` (`nil`: the main token) whose answer did or
    /// did not carry a new refresh token.
    static func after(_ chain: RefreshChain?, resource: String?, rotated: Bool, keepsResources: Bool = false) -> RefreshChain {
        var chain = chain ?? RefreshChain()
        if rotated {
            chain.rotates = true
            if let resource, !keepsResources { chain.narrowedTo = resource }
        } else if chain.rotates == nil {
            chain.rotates = false
        }
        return chain
    }

    /// The typed error for a refusal (`nil` for the other decisions).
    static func error(for decision: Decision) -> AuthError? {
        switch decision {
        case .refresh, .learnRotationFirst: nil
        case .refuseWouldNarrow(let resource): .resourceRefreshWouldNarrow(resource: resource)
        case .refuseNarrowed(let narrowed): .refreshTokenNarrowed(resource: narrowed)
        }
    }
}
