import CredentialVault
import CredentialVaultAuth
import Foundation
import Testing

/// `InsForgeConfiguration` checks (no server needed).
@Suite("InsForge configuration") struct InsForgeConfigurationTests {
    func make(_ url: String, insecure: Bool = false) throws(InsForgeError) -> InsForgeClient {
        try InsForgeClient(
            configuration: InsForgeConfiguration(baseURL: URL(string: url)!, allowsInsecureHTTP: insecure),
            store: InMemoryStore(), logger: .disabled)
    }

    @Test("https anywhere, plain http only on this machine unless allowed")
    func httpsRule() throws {
        _ = try make("https://app.insforge.example")
        _ = try make("http://127.0.0.1:7130")
        _ = try make("http://localhost:7130/")
        #expect(throws: InsForgeError.self) { try make("http://app.insforge.example") }
        _ = try make("http://app.insforge.example", insecure: true)
        #expect(throws: InsForgeError.self) { try make("ftp://app.insforge.example") }
        #expect(throws: InsForgeError.self) { try make("https://app.insforge.example/?x=1") }
    }

    @Test("the session key names the backend, with or without a trailing slash")
    func sessionKey() throws {
        let a = try make("https://app.insforge.example/").configuration.sessionKey
        let b = try make("https://app.insforge.example").configuration.sessionKey
        #expect(a == b && a.account == "session@https://app.insforge.example")
    }
}
