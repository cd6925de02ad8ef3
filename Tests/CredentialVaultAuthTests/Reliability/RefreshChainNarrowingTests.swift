import CredentialVault
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// A provider whose refresh tokens rotate (or start rotating) must never turn the main access
/// token into a resource's (RFC 8707): glewlwyd 2.7.5 narrows a refresh token rotated under
/// `resource=A` to A, and a client cannot see a refresh token's audience. Misbehaviour injected
/// by a stub; the same rules run against glewlwyd in `ResourceIndicatorTests`.
@Suite("refresh chain narrowing", .ownThread)
struct RefreshChainNarrowingTests {
    static let a = URL(string: "https://api.example.com/")!
    static let b = URL(string: "https://other.example.com/")!

    /// A stub whose code exchange issues `rt0`; a refresh without resource answers with
    /// `mainRotates` deciding whether a new refresh token comes back; a refresh with a resource
    /// always rotates (the misbehaviour: a provider that did not rotate before).
    static func stub(mainRotates: Bool) throws -> StubProvider {
        let counter = Counter()
        return try StubProvider { request in
            let form = request.form
            switch form["grant_type"] {
            case "authorization_code": return StubOIDC.tokens(access: "main0", refresh: "rt0")
            case "refresh_token":
                let n = counter.next()
                if let resource = form["resource"] {
                    return StubOIDC.tokens(access: "for \(resource) \(n)", refresh: "rt-narrowed-\(n)", expiresIn: "60")
                }
                return StubOIDC.tokens(access: "main\(n)", refresh: mainRotates ? "rt\(n)" : nil)
            default: return .notFound
            }
        }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func next() -> Int { value.withLock { $0 += 1; return $0 } }
    }

    static func refreshes(_ stub: StubProvider) -> [StubProvider.Request] {
        stub.requests(to: "/token").filter { $0.form["grant_type"] == "refresh_token" }
    }

    @Test("a chain that rotated in a resource's refresh never refreshes the main token or another resource's; that resource's still refreshes")
    func rotationInAResourceRefreshNarrowsTheChain() async throws {
        let stub = try Self.stub(mainRotates: false)
        let clock = ManualClock()
        let client = try await StubOIDC.client(stub, clock: clock)
        try await StubOIDC.signIn(client)
        // The main refresh learns the chain does not rotate; the resource's refresh then rotates anyway.
        let tokenA = try await client.accessToken(for: Self.a)
        #expect(tokenA.hasPrefix("for \(Self.a.absoluteString)"))
        let sent = Self.refreshes(stub).count
        await #expect(throws: AuthError.refreshTokenNarrowed(resource: Self.a.absoluteString)) {
            _ = try await client.getAccessToken(forceRefresh: true)
        }
        await #expect(throws: AuthError.refreshTokenNarrowed(resource: Self.a.absoluteString)) {
            _ = try await client.accessToken(for: Self.b)
        }
        #expect(Self.refreshes(stub).count == sent, "the narrowed refresh token was not sent")
        let kept = try #require(try await client.sessions.storedSession())
        #expect(kept.accessToken != tokenA, "the main token is not the resource's")
        #expect(kept.refreshToken?.hasPrefix("rt-narrowed") == true, "the session and its rotated refresh token are kept")
        // A's token expires: A is refreshed again from the chain narrowed to it.
        clock.advance(by: .seconds(120))
        #expect(try await client.accessToken(for: Self.a) != tokenA)
        let last = try #require(Self.refreshes(stub).last)
        #expect(last.form["resource"] == Self.a.absoluteString)
    }

    @Test("the main token of a chain narrowed to a resource is used while it is valid, without a refresh, even within the refresh margin")
    func narrowedChainKeepsServingAValidMainToken() async throws {
        let stub = try Self.stub(mainRotates: false)
        let clock = ManualClock()
        let client = try await StubOIDC.client(stub, clock: clock)
        try await StubOIDC.signIn(client)
        _ = try await client.accessToken(for: Self.a)
        let main = try #require(try await client.sessions.storedSession()).accessToken
        let sent = Self.refreshes(stub).count
        clock.advance(by: .seconds(3600 - 10))  // inside the 60 s margin, not expired
        #expect(try await client.getAccessToken() == main)
        #expect(Self.refreshes(stub).count == sent)
    }

    @Test("a chain whose rotation is unknown is learned by a main refresh first; a rotating one is not spent on a resource")
    func unknownRotationIsLearnedFirst() async throws {
        let stub = try Self.stub(mainRotates: true)
        let client = try await StubOIDC.client(stub)
        try await StubOIDC.signIn(client)
        await #expect(throws: AuthError.resourceRefreshWouldNarrow(resource: Self.a.absoluteString)) {
            _ = try await client.accessToken(for: Self.a)
        }
        let refreshes = Self.refreshes(stub)
        #expect(refreshes.count == 1 && refreshes.first?.form["resource"] == nil, "one refresh, of the main token")
        let stored = try #require(try await client.sessions.storedSession())
        #expect(stored.refreshToken == "rt1", "the learning refresh's rotated token is kept")
        #expect(stored.accessToken == "main1")
        // Known now: refused again without a request; the main token still refreshes.
        await #expect(throws: AuthError.resourceRefreshWouldNarrow(resource: Self.b.absoluteString)) {
            _ = try await client.accessToken(for: Self.b)
        }
        #expect(Self.refreshes(stub).count == 1)
        #expect(try await client.getAccessToken(forceRefresh: true) == "main2")
    }
}
