import CredentialVault
import Foundation

/// What a token exchange (RFC 8693 section 2.1) asks for: a token in exchange for the subject
/// token (and, for delegation, the actor token), for some audiences, resources and scopes.
/// The tokens are secrets: `description` never shows them.
public struct TokenExchangeRequest: Sendable, CustomStringConvertible {
    /// The most audiences, resources or scopes one request may name: a provider has no use for
    /// more, and a mistake (a list built from input) should not become a huge request.
    public static let maximumTargets = 32
    /// The longest token accepted as subject or actor (64 KiB: far above any JWT or SAML
    /// assertion in use, far below the request limits of providers).
    public static let maximumTokenLength = 65_536

    /// The token that represents the party on whose behalf the request is made.
    public var subjectToken: String
    /// What `subjectToken` is.
    public var subjectTokenType: TokenTypeIdentifier
    /// The token of the acting party (delegation), with its type; `nil` for impersonation.
    public var actor: (token: String, type: TokenTypeIdentifier)?
    /// The type of token wanted back; `nil` lets the provider choose.
    public var requestedTokenType: TokenTypeIdentifier?
    /// Where the token will be used (`resource`, absolute URIs; sent in canonical form).
    public var resources: [URL]
    /// Logical names of the target services (`audience`).
    public var audiences: [String]
    /// The scopes wanted (`scope`).
    public var scopes: [String]

    /// Creates a request.
    public init(
        subjectToken: String, subjectTokenType: TokenTypeIdentifier, actor: (token: String, type: TokenTypeIdentifier)? = nil,
        requestedTokenType: TokenTypeIdentifier? = nil, resources: [URL] = [], audiences: [String] = [], scopes: [String] = []
    ) {
        self.subjectToken = subjectToken
        self.subjectTokenType = subjectTokenType
        self.actor = actor
        self.requestedTokenType = requestedTokenType
        self.resources = resources
        self.audiences = audiences
        self.scopes = scopes
    }

    /// The request without its tokens.
    public var description: String {
        var parts = ["subject: \(subjectTokenType)"]
        if let actor { parts.append("actor: \(actor.type)") }
        if let requestedTokenType { parts.append("requested: \(requestedTokenType)") }
        if !resources.isEmpty { parts.append("resources: \(resources.count)") }
        if !audiences.isEmpty { parts.append("audiences: \(audiences.count)") }
        if !scopes.isEmpty { parts.append("scopes: \(scopes.joined(separator: " "))") }
        return "TokenExchangeRequest(\(parts.joined(separator: ", ")))"
    }

    /// The form parameters after `grant_type`, each value checked first.
    /// - Throws: `AuthError.invalidConfiguration` naming the field at fault (never its value).
    func parameters() throws(AuthError) -> [(String, String)] {
        try Self.checkToken(subjectToken, field: "subject token")
        var form = [("subject_token", subjectToken), ("subject_token_type", subjectTokenType.uri)]
        if let actor {
            try Self.checkToken(actor.token, field: "actor token")
            form += [("actor_token", actor.token), ("actor_token_type", actor.type.uri)]
        }
        if let requestedTokenType { form.append(("requested_token_type", requestedTokenType.uri)) }
        guard resources.count <= Self.maximumTargets, audiences.count <= Self.maximumTargets, scopes.count <= Self.maximumTargets else {
            throw .invalidConfiguration("a token exchange names at most \(Self.maximumTargets) resources, audiences and scopes each")
        }
        for resource in resources {
            // RFC 8693 section 2.1: an absolute URI without a fragment (RFC 8707's rule).
            form.append(("resource", try ResourceURI.indicator(resource)))
        }
        for audience in audiences {
            guard !audience.isEmpty, audience.utf8.count <= 2048, !CredentialKey.hasControlCharacter(audience) else {
                throw .invalidConfiguration("an audience must be 1 to 2048 bytes without control characters")
            }
            form.append(("audience", audience))
        }
        if !scopes.isEmpty {
            guard scopes.allSatisfy(Self.isScopeToken) else {
                throw .invalidConfiguration("a scope is printable ASCII without spaces or quotes (RFC 6749 section 3.3)")
            }
            form.append(("scope", scopes.joined(separator: " ")))
        }
        return form
    }

    private static func checkToken(_ token: String, field: String) throws(AuthError) {
        guard !token.isEmpty, token.utf8.count <= maximumTokenLength,
            !CredentialKey.hasControlCharacter(token)
        else {
            throw .invalidConfiguration("the \(field) must be 1 to \(maximumTokenLength) bytes without control characters")
        }
    }

    // RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
    private static func isScopeToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
