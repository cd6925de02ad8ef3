import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Logging
import Testing

@testable import CredentialVaultSecretService

/// The resolver logs its choice and why (the keyring's states, fallbacks included, are the
/// decisions' reasons: tested in ResolverKeyringStateTests).
@Suite(.ownThread) struct ResolverLoggingTests {
    static let application = try! ApplicationIdentifier("org.cvtest.ResolverLogging")

    private func resolver(_ environment: [String: String], _ capture: LogCapture) -> BackendResolver {
        var resolver = BackendResolver(application: Self.application, environment: environment)
        resolver.logger = capture.logger()
        return resolver
    }

    @Test("the choice is logged at info with its reason, explicit or from CREDVAULT_BACKEND")
    func choicesAreLogged() throws {
        let capture = LogCapture()
        _ = try resolver([:], capture).decide(.memory)
        _ = try resolver(["CREDVAULT_BACKEND": "file"], capture).decide()
        #expect(capture.entries.map(\.level) == [.info, .info], "\(capture.text)")
        #expect(capture.entries.map(\.message) == ["backend chosen: memory (chosen explicitly)", "backend chosen: file (CREDVAULT_BACKEND=file)"])
        #expect(capture.entries.allSatisfy { $0.metadata["category"] == "resolver" })
    }

    @Test("the sealed file it opens logs to the resolver's logger, unless the sealed file has one of its own")
    func theSealedFileInheritsTheLogger() {
        let capture = LogCapture(), own = LogCapture()
        var resolver = resolver([:], capture)
        resolver.sealedFileConfiguration.logger.info("probe")
        #expect(capture.entries.map(\.message) == ["probe"])
        resolver.sealedFile.logger = own.logger()
        resolver.sealedFileConfiguration.logger.info("probe")
        #expect(own.entries.map(\.message) == ["probe"] && capture.entries.count == 1)
        #expect(BackendResolver(application: Self.application).logger.handler is SwiftLogNoOpLogHandler, "silent by default")
    }
}
