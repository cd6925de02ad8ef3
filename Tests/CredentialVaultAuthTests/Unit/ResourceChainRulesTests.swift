import Testing

@testable import CredentialVaultAuth

/// The pure rules deciding when the session's one refresh token may serve a resource.
@Suite("resource chain rules")
struct ResourceChainRulesTests {
    static let a = "https://api.example.com/"
    static let b = "http://127.0.0.1:9999/mcp"

    @Test(
        "before a refresh: what each known chain allows",
        arguments: [
            (RefreshChain?.none, String?.none, ResourceChainRules.Decision.refresh),
            (nil, a, .learnRotationFirst),
            (RefreshChain(rotates: false), a, .refresh),
            (RefreshChain(rotates: true), a, .refuseWouldNarrow(resource: a)),
            (RefreshChain(rotates: true), nil, .refresh),
            (RefreshChain(rotates: true, narrowedTo: a), a, .refresh),
            (RefreshChain(rotates: true, narrowedTo: a), b, .refuseNarrowed(to: a)),
            (RefreshChain(rotates: true, narrowedTo: a), nil, .refuseNarrowed(to: a)),
        ])
    func decisions(chain: RefreshChain?, resource: String?, expected: ResourceChainRules.Decision) {
        #expect(ResourceChainRules.decide(chain, resource: resource) == expected)
    }

    @Test("after a refresh: rotation is learned, and a rotation in a resource's refresh narrows the chain to it")
    func learning() {
        #expect(ResourceChainRules.after(nil, resource: nil, rotated: false) == RefreshChain(rotates: false))
        #expect(ResourceChainRules.after(nil, resource: nil, rotated: true) == RefreshChain(rotates: true))
        #expect(ResourceChainRules.after(RefreshChain(rotates: false), resource: Self.a, rotated: true) == RefreshChain(rotates: true, narrowedTo: Self.a))
        #expect(ResourceChainRules.after(RefreshChain(rotates: false), resource: Self.a, rotated: false) == RefreshChain(rotates: false))
        // A chain once seen rotating stays so, and a narrowing is never undone by a later answer.
        #expect(ResourceChainRules.after(RefreshChain(rotates: true, narrowedTo: Self.a), resource: Self.a, rotated: false)
            == RefreshChain(rotates: true, narrowedTo: Self.a))
    }

    @Test("refusals are typed errors naming the resource")
    func errors() {
        #expect(ResourceChainRules.error(for: .refresh) == nil)
        #expect(ResourceChainRules.error(for: .learnRotationFirst) == nil)
        #expect(ResourceChainRules.error(for: .refuseWouldNarrow(resource: Self.a)) == .resourceRefreshWouldNarrow(resource: Self.a))
        #expect(ResourceChainRules.error(for: .refuseNarrowed(to: Self.a)) == .refreshTokenNarrowed(resource: Self.a))
    }
}
