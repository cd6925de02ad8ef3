import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests.MCPProfileCLI {
    @Test("auth header for a protected-resource profile refuses a URL off the resource's origin, as the library does")
    func headerRefusedOffTheProtectedResource() async throws {
        let server = try await GlewlwydTests.MCPProfile.server(provider)
        defer { server.stop() }
        let process = try CLIProcess(
            ["auth", "login", "--protected-resource", server.resource.absoluteString,
             "--port", String(try GlewlwydTests.Registration.freePort()), "--no-browser", "--timeout", "30"] + vaultArgs,
            environment: environment)
        let line = await process.waitForStderrLine { $0.hasPrefix("http") }
        let url = try #require(line.flatMap(URL.init(string:)), "no sign-in URL on stderr: \(process.stderr)")
        let browser = try await TestBrowser.signIn(provider)
        let pages = PageBox()
        try await browser.consentingOpener(pages: pages).open(url)
        #expect(try await pages.result().status == 200)
        #expect(try await process.wait() == 0, "\(process.stderr)")

        for other in ["https://elsewhere.example/mcp", "http://localhost:\(server.resource.port ?? 0)/mcp"] {
            let header = try await run(["auth", "header", "--url", other])
            #expect(header.status != 0, "the resource's token was printed for \(other)")
            let printed = header.stdout.contains("Bearer")  // not interpolated: the token stays out of the test log
            #expect(!printed, "the resource's token was printed for \(other)")
        }
    }
}
