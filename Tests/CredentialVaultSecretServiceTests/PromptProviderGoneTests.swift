import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

#if canImport(Glibc)
import Glibc
#endif

/// A provider that quits, crashes or stops while an operation waits for its prompt is reported
/// as what it is (gone: `notAvailable` naming it; not answering: `timedOut`), never as a prompt
/// that asks a person (`interactionRequired`, whose advice, "allow interaction", cannot help),
/// and a wait for a person (interaction allowed, minutes to answer) ends as soon as the provider
/// is gone. Each on a KeePassXC of its own with its default settings, whose deletion
/// confirmation is a prompt that waits for a person.
@Suite(.ownThread) struct PromptProviderGoneTests {
    @Test(.ownProvider(.keepassxc))
    func aProviderKilledDuringAPromptIsReportedGoneNotAsAskingAPerson() async throws {
        let error = try await deleteWhilePrompting(signal: SIGKILL, allowsInteraction: false)
        guard case .notAvailable(let why)? = error else {
            Issue.record("a provider killed while its prompt was pending gave \(String(describing: error))")
            return
        }
        #expect(why.contains("KeePassXC"), "\(why)")
    }

    @Test(.ownProvider(.keepassxc))
    func aWaitForAPersonEndsWhenTheProviderIsKilled() async throws {
        let error = try await deleteWhilePrompting(signal: SIGKILL, allowsInteraction: true)
        guard case .notAvailable(let why)? = error else {
            Issue.record("a provider killed while a person was awaited gave \(String(describing: error))")
            return
        }
        #expect(why.contains("KeePassXC"), "\(why)")
    }

    @Test(.ownProvider(.keepassxc))
    func aProviderStoppedDuringAPromptTimesOutNotAsAskingAPerson() async throws {
        let error = try await deleteWhilePrompting(signal: SIGSTOP, allowsInteraction: false)
        #expect(error == .timedOut, "a provider stopped while its prompt was pending gave \(String(describing: error))")
    }

    /// Deletes an item of this program's on a KeePassXC asking for deletion confirmation, sends
    /// `signal` to it once the prompt waits, and returns what the delete threw. The wait for a
    /// person (when allowed) is 10 minutes: only the provider's going ends it within the ceiling.
    private func deleteWhilePrompting(signal: Int32, allowsInteraction: Bool) async throws -> CredentialVaultError? {
        let cli = try ProviderCLI(.keepassxc)
        defer { cli.cleanUp() }
        let own = try cli.ownInstance(options: ["WITH_PROVIDER_KEEPASSXC_DEFAULTS": "1"])
        defer { own.send(SIGCONT) }
        var configuration = cli.store.configuration
        configuration.timeout = .seconds(2)
        configuration.allowsInteraction = allowsInteraction
        configuration.interactiveUnlockTimeout = .seconds(600)
        let store = SecretServiceStore(configuration: configuration)
        let key = CredentialKey(service: cli.service, account: "mine")
        try store.synchronous.save(Data("v".utf8), for: key)
        let signalled = Arrivals()
        store.hooks.onPromptWaiting {
            own.send(signal)
            signalled.arrive()
        }
        let outcome = try await withCeiling(.seconds(60), "the delete whose provider went") {
            await Task { () async throws(CredentialVaultError) -> Bool in try await store.delete(key) }.result
        }
        #expect(await signalled.reached(1), "the deletion prompt was started")
        guard case .failure(let error) = outcome else { return nil }
        return error as? CredentialVaultError
    }
}
