import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultTesting
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultSecretService

/// Keyring custody against the private gnome-keyring: the custody suite, and what a
/// copy of `$HOME` without the keyring gets.
@Suite(.ownThread, .privateKeyring, .serialized) struct KeyringCustodyTests {
    private func run(_ check: (CustodySuite.Setup) throws -> Void) throws {
        let setup = try CustodySuite.Setup.scratch(custody: .keyring, custodians: [KeyringCustodian(timeout: TestEnvironment.timeout)])
        defer { setup.remove() }
        try check(setup)
    }

    @Test(arguments: CustodySuite.Check.allCases)
    func custodySuite(_ check: CustodySuite.Check) async throws {
        try await offThePool {     try run { try CustodySuite.run(check, on: $0) }
        }
    }

    /// Without the keyring's secret (a `$HOME` backup on a machine whose keyring lacks it, or the
    /// item removed), device-only values do not open: never a fallback to the host secret alone.
    @Test func withoutTheKeyringSecretDeviceOnlyValuesStayClosed() async throws {
        try await offThePool {
            try run { setup in
                let store = try CustodySuite.createsAndReopens(setup)
                let custodian = KeyringCustodian(timeout: TestEnvironment.timeout)
                let saved = try #require(try custodian.store.load(KeyringCustodian.secretKey))
                #expect(try custodian.store.delete(KeyringCustodian.secretKey))
                defer { try? custodian.store.save(saved, for: KeyringCustodian.secretKey, options: .portable) }
                let reopened = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect {
                    _ = try reopened.load(CredentialKey(service: "custody", account: "device-only"))
                } throws: { error in
                    guard case .notAvailable = error as? CredentialVaultError else { return false }
                    return true
                }
                // Restored (as a keyring restored from a backup gives it back): opens again.
                try custodian.store.save(saved, for: KeyringCustodian.secretKey, options: .portable)
                let again = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try again.load(CredentialKey(service: "custody", account: "device-only")) == Data("device".utf8))
            }
        }
    }

    /// A device-key vault under keyring custody: no passphrase, and the host secret alone (a
    /// `$HOME` copy with another keyring) opens nothing.
    @Test func aDeviceKeyVaultNeedsTheKeyring() async throws {
        try await offThePool {
            try run { setup in
                var setup = setup
                setup.secret = .device
                let store = try CustodySuite.createsAndReopens(setup)
                var asFile = setup.configuration
                asFile.custodians = []
                asFile.custody = .file
                #expect {
                    _ = try SealedFileStore.open(at: store.url, secret: .device, configuration: asFile)
                } throws: { error in
                    guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                    return message.contains("keyring custodian, which was not configured")
                }
            }
        }
    }

    /// Concurrent first uses agree on one secret (made under the key's lock, which threads of
    /// one process contend for like processes).
    @Test func concurrentFirstUsesAgreeOnOneSecret() async throws {
        try await offThePool {
            let custodian = KeyringCustodian(timeout: TestEnvironment.timeout)
            let saved = try custodian.store.load(KeyringCustodian.secretKey)
            _ = try custodian.store.delete(KeyringCustodian.secretKey)
            defer { if let saved { try? custodian.store.save(saved, for: KeyringCustodian.secretKey, options: .portable) } }
            let binding = SecureBytes.random(count: 32)
            let secrets = Mutex<[SecureBytes]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                if let secret = try? KeyringCustodian(timeout: TestEnvironment.timeout).deviceSecret(binding: binding, create: true) { secrets.withLock { $0.append(secret) } }
            }
            let all = secrets.withLock { $0 }
            #expect(all.count == 6)
            #expect(all.allSatisfy { $0.constantTimeEquals(all[0]) })
        }
    }
}

/// Keyring custody through the real CLI in a throw-away bus whose gnome-keyring-daemon is
/// restarted (unlocked, then locked, then unlocked): the counter and the device secret survive
/// restarts, an older copy is refused (exit 13), a locked keyring is `locked` (exit 10), and
/// `accept-restore` takes a deliberate restore (Tests/Scripts/keyring-custody-restarts.sh).
@Suite(.ownThread, .throwAwayBuses) struct KeyringCustodyRestartTests {
    @Test func survivesDaemonRestartsAndRefusesAnOlderCopy() async throws {
        try await offThePool {
            let scratch = try CustodySuite.Setup.scratch(custody: .keyring, custodians: [])
            defer { scratch.remove() }
            let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/Scripts/keyring-custody-restarts.sh").path
            let credvault = TestEnvironment.probe.deletingLastPathComponent().appendingPathComponent("credvault").path
            let result = try CLIChild.run(
                TestEnvironment.withKeyringScript.path, ["--unlocked", "--", script, credvault, scratch.directory.path])
            let steps = Dictionary(
                result.stdoutText.split(separator: "\n").compactMap { line -> (String, Int)? in
                    let parts = line.split(separator: " ")
                    guard parts.count == 2, let status = Int(parts[1]) else { return nil }
                    return (String(parts[0]), status)
                }, uniquingKeysWith: { max($0, $1) })  // a step run twice (a restart) reports its worst
            let expected: [(String, Int)] = [
                ("restart-unlocked", 0), ("restart-locked", 0), ("init", 0), ("info-custody", 0), ("info-counter", 0), ("store-device", 0), ("store-token", 0), ("store-newer", 0),
                ("lookup-after-restart", 0), ("lookup-device-after-restart", 0), ("lookup-older-copy", 13), ("lookup-locked", 10),
                ("accept-restore", 0), ("lookup-restored", 0),
            ]
            for (step, status) in expected {
                #expect(steps[step] == status, "\(step): \(steps[step].map(String.init) ?? "missing"); output:\n\(result.stdoutText)\n\(result.stderr)")
            }
        }
    }
}
