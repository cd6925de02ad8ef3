import Logging
import CredentialVault
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

/// `InsForgeConfiguration` checks (no server needed).
@Suite("InsForge configuration", .ownThread) struct InsForgeConfigurationTests {
    func make(_ url: String, insecure: Bool = false) async throws(InsForgeError) -> InsForgeClient {
        try await InsForgeClient(
            configuration: InsForgeConfiguration(baseURL: URL(string: url)!, allowsInsecureHTTP: insecure),
            store: InMemoryStore(), logger: .credentialVaultSilent)
    }

    @Test("https anywhere, plain http only on this machine unless allowed")
    func httpsRule() async throws {
        _ = try await make("https://app.insforge.example")
        _ = try await make("http://127.0.0.1:7130")
        _ = try await make("http://localhost:7130/")
        await #expect(throws: InsForgeError.invalidInput("the base URL must use https (plain http is accepted only on this machine)")) {
            try await make("http://app.insforge.example")
        }
        _ = try await make("http://app.insforge.example", insecure: true)
        for url in ["ftp://app.insforge.example", "https://app.insforge.example/?x=1"] {
            await #expect(throws: InsForgeError.invalidInput("the base URL must be an http(s) URL without query or fragment")) {
                try await make(url)
            }
        }
    }

    @Test("the session key names the backend, with or without a trailing slash")
    func sessionKey() async throws {
        let a = try await make("https://app.insforge.example/").configuration.sessionKey
        let b = try await make("https://app.insforge.example").configuration.sessionKey
        #expect(a == b && a.account == "session@https://app.insforge.example")
    }
}
