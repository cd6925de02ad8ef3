/// The OAuth providers the InsForge contract lists for `/api/auth/oauth/{provider}`.
/// (The backend answers 501 for `instagram`, `tiktok` and `spotify`; that arrives as
/// `InsForgeError.backend` with status 501.)
public enum InsForgeOAuthProvider: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Google.
    case google
    /// GitHub.
    case github
    /// Discord.
    case discord
    /// LinkedIn.
    case linkedin
    /// Facebook.
    case facebook
    /// Instagram.
    case instagram
    /// TikTok.
    case tiktok
    /// Sign in with Apple.
    case apple
    /// X (Twitter).
    case x
    /// Spotify.
    case spotify
    /// Microsoft.
    case microsoft

    /// The provider's path segment (`"github"`).
    public var description: String { rawValue }
}
