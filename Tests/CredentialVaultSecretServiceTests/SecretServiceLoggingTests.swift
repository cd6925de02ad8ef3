import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Logging
import Testing

@testable import CredentialVaultSecretService

#if canImport(Glibc)
import Glibc
#endif

#if Metrics
import MetricsTestKit
#endif

/// What a Secret Service store tells the logger of its configuration, against a gnome-keyring
/// of the test's own (a private bus, so that this store makes the process's connection to
/// it): the provider found, a provider that stopped answering (`timedOut`); never the
/// credential's names or value.
@Suite(.ownThread) struct SecretServiceLoggingTests {
    let key = CredentialKey(service: "payroll.internal.example", account: "svc-ledger-writer")
    let value = Data("value-that-is-never-logged".utf8)

    @Test(.ownProvider(.gnomeKeyring))
    func theProviderAndATimeoutAreLogged() async throws {
        try await offThePool {
            let own = try ProviderInstance(.gnomeKeyring)
            defer { own.stop() }
            let capture = LogCapture()
            var configuration = SecretServiceConfiguration(timeout: .seconds(2), busAddress: own.bus)
            configuration.logger = capture.logger()
            #if Metrics
            let metrics = TestMetrics()
            configuration.metrics = VaultMetrics(factory: metrics)
            #endif
            let store = SecretServiceStore(configuration: configuration)
            defer { _ = try? store.delete(key) }
            try store.save(value, for: key, options: .portable)
            let connected = try #require(capture.entries.first { $0.message.contains("connected to the Secret Service") }, "\(capture.text)")
            #expect(connected.level == .info && connected.metadata["provider"] == "gnome-keyring" && connected.metadata["category"] == "secret-service")
            #expect(capture.entries.count == 1, "a routine save logs nothing else: \(capture.text)")

            own.send(SIGSTOP)
            let stopped = Result { () throws(CredentialVaultError) in try store.load(key) }
            own.send(SIGCONT)
            #expect(throws: CredentialVaultError.timedOut) { try stopped.get() }
            let timeout = try #require(capture.entries.first { $0.message.contains("did not answer") }, "\(capture.text)")
            #expect(timeout.level == .warning)
            #if Metrics
            #expect(try metrics.expectCounter("credential_vault_timeouts_total", [("backend", "secret_service"), ("operation", "call")]).totalValue == 1)
            #endif
            #expect(try store.load(key) == value, "answers again once resumed")

            for secret in [key.service, key.account, String(decoding: value, as: UTF8.self)] {
                #expect(!capture.text.contains(secret), "\(capture.text)")
            }
        }
    }

    @Test func silentByDefault() {
        #expect(SecretServiceConfiguration().logger.handler is SwiftLogNoOpLogHandler)
    }
}
