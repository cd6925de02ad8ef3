import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// An expired ephemeral credential is removed when found expired, and nothing else with it: a
/// persistent item of the same key that another program stored meanwhile (`secret-tool store`
/// adds one beside ours, its attribute set differing) survives, as the Secret Service backend
/// deletes only the expired session items.
@Suite(.ownThread) struct LibsecretFileExpiryTests {
    let key = CredentialKey(service: "api.example.com", account: "alice")
    var identity: [String: String] { ["service": key.service, "username": key.account] }

    enum Finder: CaseIterable { case load, take, metadata }

    @Test(arguments: Finder.allCases)
    func findingAnExpiredEphemeralKeepsThePersistentItemAnotherProgramStored(finder: Finder) async throws {
        let file = SecretToolFile()
        let clock = ManualClock(start: Date())
        let store = try file.store(clock: clock)
        try store.synchronous.save(Data("one-time".utf8), for: key, options: .ephemeral(ttl: .seconds(60)))
        #expect(try await file.store("persistent", attributes: identity))
        clock.advance(by: .seconds(120))
        switch finder {
        case .load: #expect(throws: CredentialVaultError.expired) { try store.synchronous.load(key) }
        case .take: #expect(throws: CredentialVaultError.expired) { try store.synchronous.take(key) }
        case .metadata: #expect(try store.synchronous.metadata(for: key) == nil)
        }
        #expect(try await file.search(identity).count == 1, "the expired item is gone")
        #expect(try await file.lookup(identity) == "persistent")
        #expect(try store.synchronous.load(key) == Data("persistent".utf8))
    }
}
