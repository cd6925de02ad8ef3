// The probe's BackendResolver steps (the automatic choice on this process's bus):
//   resolve:POLICY | resolve-async:POLICY | open:POLICY | open-async:POLICY
// POLICY is the LockedKeyringPolicy: report, file or waitMILLISECONDS. Outcomes: the decided
// backend (`secret-service`, `file`), `secret-service-locked` for a locked keyring kept,
// `opened:KIND` for an open, or `error:<case>`.
import CredentialVault
import CredentialVaultSecretService
import Dispatch
import Foundation
import Synchronization

enum ResolverSteps {
    /// Runs one step (`parts` is the step split at its colons).
    static func run(_ parts: [String], configuration: SecretServiceConfiguration) throws(CredentialVaultError) -> String {
        guard parts.count == 2, let resolver = resolver(policy: parts[1], configuration: configuration) else {
            return "usage:unknown-policy"
        }
        switch parts[0] {
        case "resolve": return outcome(try resolver.decide())
        case "resolve-async": return outcome(try blocking { () async throws(CredentialVaultError) in try await resolver.decide() })
        case "open": return "opened:\(try resolver.open().decision.kind)"
        default: return "opened:\(try blocking { () async throws(CredentialVaultError) in try await resolver.open() }.decision.kind)"
        }
    }

    /// A resolver for an application of its own, with a throw-away vault and device identity.
    private static func resolver(policy: String, configuration: SecretServiceConfiguration) -> BackendResolver? {
        let lockedKeyring: LockedKeyringPolicy
        switch policy {
        case "report": lockedKeyring = .reportLocked
        case "file": lockedKeyring = .useSealedFile
        case _ where policy.hasPrefix("wait"):
            guard let milliseconds = Int(policy.dropFirst(4)) else { return nil }
            lockedKeyring = .waitForUnlock(timeout: .milliseconds(milliseconds))
        default: return nil
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-probe-\(UUID().uuidString)")
        let device = DeviceIdentity(hostSecretURL: directory.appendingPathComponent("state/host-secret"), machineID: "probe")
        var resolver = BackendResolver(
            application: try! ApplicationIdentifier("org.credentialvault.probe"), environment: [:], secretService: configuration,
            sealedFileURL: directory.appendingPathComponent("data/credentials.cvault"),
            sealedFile: SealedFileConfiguration(device: device), lockedKeyring: lockedKeyring)
        resolver.unlockPollInterval = .milliseconds(100)
        return resolver
    }

    private static func outcome(_ decision: BackendDecision) -> String {
        "\(decision.kind)" + (decision.isKeyringLocked ? "-locked" : "")
    }

    /// Runs `body` in a task and waits for it on this thread (the probe's steps are sequential).
    private static func blocking<T: Sendable>(
        _ body: @escaping @Sendable () async throws(CredentialVaultError) -> T
    ) throws(CredentialVaultError) -> T {
        let result = Mutex<Result<T, CredentialVaultError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, CredentialVaultError>
            do throws(CredentialVaultError) { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
