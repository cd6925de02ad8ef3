import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The DPoP nonce cache holds what servers (and other processes sharing the store) hand it:
/// bounded in count, and checked when read back.
@Suite("DPoP nonce cache bounds", .ownThread)
struct DPoPNonceBoundsTests {
    @Test("nonces from ever new origins are kept up to a bound, in memory and in the store; the latest is kept")
    func originsBounded() async throws {
        let store = InMemoryStore()
        let key = CredentialKey(service: "t", account: "nonces")
        let cache = DPoPNonceCache(store: store, key: key, options: .default)
        for index in 0..<300 {
            await cache.learn(from: HTTPResponse(status: 200, headers: ["DPoP-Nonce": "n\(index)"]), for: URL(string: "https://h\(index).example/")!)
        }
        let stored = try OutsideJSON.decode([String: String].self, from: try #require(try await store.load(key)))
        #expect(stored.count <= DPoPNonceCache.maximumOrigins)
        #expect(stored["https://h299.example:443"] == "n299")
        #expect(await cache.nonce(for: URL(string: "https://h299.example/x")!) == "n299")
    }

    @Test("stored nonces another process wrote are checked: oversized or invalid ones are not put in proofs")
    func storedNoncesChecked() async throws {
        let store = InMemoryStore()
        let key = CredentialKey(service: "t", account: "nonces")
        var written = ["https://a.example:443": String(repeating: "x", count: 100_000), "https://b.example:443": "bad\"nonce"]
        for index in 0..<500 { written["https://f\(index).example:443"] = "f\(index)" }
        try await store.save(try JSONEncoder().encode(written), for: key, options: .default)
        let cache = DPoPNonceCache(store: store, key: key, options: .default)
        #expect(await cache.nonce(for: URL(string: "https://a.example/")!) == nil)
        #expect(await cache.nonce(for: URL(string: "https://b.example/")!) == nil)
        await cache.learn(from: HTTPResponse(status: 200, headers: ["DPoP-Nonce": "c"]), for: URL(string: "https://c.example/")!)
        let stored = try OutsideJSON.decode([String: String].self, from: try #require(try await store.load(key)))
        #expect(stored.count <= DPoPNonceCache.maximumOrigins)
        #expect(stored["https://c.example:443"] == "c")
    }
}
