import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests.MCPProfile {
    @Test("a second resource of the same authorization server gets its own token, never the first resource's")
    func secondResourceGetsItsOwnToken() async throws {
        let provider = try Glewlwyd.require()
        let first = try await Self.server(provider)
        defer { first.stop() }
        let second = try await Self.server(provider)
        defer { second.stop() }
        let store = InMemoryStore()
        let port = try GlewlwydTests.Registration.freePort()
        let browser = try await TestBrowser.signIn(provider)

        let firstClient = try ProtectedResourceClient(configuration: Self.configuration(first, port: port), store: store)
        let pages = PageBox()
        let firstAnswer = try await firstClient.send(
            HTTPRequest(url: first.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: pages), timeout: .seconds(30))
        #expect(firstAnswer.status == 200)

        // Same store, same redirect port: the registration is reused (same client id) and the
        // session slot (client id at issuer) is the first resource's.
        let secondClient = try ProtectedResourceClient(configuration: Self.configuration(second, port: port), store: store)
        let secondPages = PageBox()
        let secondAnswer = try await secondClient.send(
            HTTPRequest(url: second.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: secondPages),
            timeout: .seconds(30))
        #expect(secondAnswer.status == 200, "the second resource was sent the first resource's token (audience \(first.resource))")
        #expect(second.answeredStatuses == [401, 200])
        try await Self.unregister(firstClient)
    }
}
