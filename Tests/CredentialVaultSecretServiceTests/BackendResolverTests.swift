import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// Backend choice in this process (the automatic fallbacks are tested through `credvault info`
/// on other buses, in CLITests).
@Suite struct BackendResolverTests {
    @Test func explicitChoicesAreTakenAsTheyAre() throws {
        let resolver = BackendResolver(environment: ["CREDVAULT_BACKEND": "memory"])
        #expect(try resolver.decide(.file).kind == .file)
        #expect(try resolver.decide(.secretService).kind == .secretService)
        #expect(try resolver.decide(.memory).kind == .memory)
    }

    @Test func environmentOverridesTheAutomaticChoice() throws {
        for (name, kind) in [("file", BackendKind.file), ("memory", .memory), ("secret-service", .secretService)] {
            let decision = try BackendResolver(environment: ["CREDVAULT_BACKEND": name]).decide()
            #expect(decision.kind == kind)
            #expect(decision.reason == "CREDVAULT_BACKEND=\(name)")
        }
        #expect(throws: CredentialVaultError.self) {
            try BackendResolver(environment: ["CREDVAULT_BACKEND": "plaintext"]).decide()
        }
    }

    @Test func namesParse() {
        #expect(BackendChoice(name: "auto") == .automatic)
        #expect(BackendChoice(name: "automatic") == .automatic)
        #expect(BackendChoice(name: "secret-service") == .secretService)
        #expect(BackendChoice(name: "plain") == nil)
    }

    @Test(.privateKeyring) func automaticPicksTheUnlockedSecretService() throws {
        let selection = try BackendResolver(environment: [:]).open()
        #expect(selection.decision.kind == .secretService, "\(selection.decision)")
        #expect(selection.decision.secretServiceStatus?.isLocked == false)
        #expect(selection.store is SecretServiceStore)
    }

    @Test func fileChoiceOpensTheSealedFileWithTheDeviceKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-resolver-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = DeviceIdentity(hostSecretURL: directory.appendingPathComponent("state/host-secret"), machineID: "test-machine")
        let resolver = BackendResolver(
            environment: ["CREDVAULT_BACKEND": "file"], sealedFileURL: directory.appendingPathComponent("data/v.cvault"),
            sealedFile: SealedFileConfiguration(device: device))
        let selection = try resolver.open()
        let store = try #require(selection.store as? SealedFileStore)
        #expect(store.keySource == .device)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"))
        #expect(try resolver.open().store.load(CredentialKey(service: "s", account: "a")) == Data("v".utf8))
    }
}
