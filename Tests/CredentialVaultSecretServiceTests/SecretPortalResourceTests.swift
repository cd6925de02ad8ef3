import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultSecretService

/// Many requests to the portal, answered, given up and refused, leave no file descriptor open
/// behind them (the pipe's ends, the fd lists).
@Suite(.ownThread, .privateKeyring)
struct SecretPortalResourceTests {
    static func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

    func client(_ stub: StubSecretPortal, response: Duration) -> SecretPortal {
        SecretPortal(
            sandbox: SecretPortalFaultTests.sandbox, busAddress: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
            portalName: stub.uniqueName, callTimeout: TestEnvironment.timeout, responseTimeout: response, readTimeout: .milliseconds(50))
    }

    @Test func manyRequestsLeaveNoDescriptorOpen() throws {
        let answering = try StubSecretPortal(behaviour: .answer(response: 0, bytes: 64))
        defer { answering.stop() }
        let short = try StubSecretPortal(behaviour: .answer(response: 0, bytes: 10))
        defer { short.stop() }
        // Warm up (the bus connection, GLib's worker thread).
        _ = try client(answering, response: TestEnvironment.timeout).retrieveSecret()
        let before = Self.openDescriptors()
        for _ in 0..<50 {
            _ = try client(answering, response: TestEnvironment.timeout).retrieveSecret()
            #expect(throws: (any Error).self) { try client(short, response: TestEnvironment.timeout).retrieveSecret() }
        }
        // Other suites run meanwhile and open and close descriptors of their own (25 more at
        // one moment of a CI run under ASan): the fewest of a few samples is compared, and a
        // leak here would be one or two per request (100 requests), twice the bound at least.
        var after = Int.max
        for _ in 0..<5 {
            after = min(after, Self.openDescriptors())
            usleep(100_000)
        }
        #expect(after < before + 50)
    }
}

/// A `Response` on our request's path from another connection than the portal's (an impostor
/// on the bus) is not the portal's answer.
@Suite(.ownThread, .privateKeyring)
struct SecretPortalImpostorTests {
    @Test func aResponseFromAnotherConnectionIsIgnored() throws {
        let portal = try StubSecretPortal(behaviour: .never)
        defer { portal.stop() }
        let impostor = try StubSecretPortal(behaviour: .never)
        defer { impostor.stop() }
        let client = SecretPortal(
            sandbox: SecretPortalFaultTests.sandbox, busAddress: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
            portalName: portal.uniqueName, callTimeout: TestEnvironment.timeout, responseTimeout: .seconds(2), readTimeout: .seconds(1))
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<CredentialVaultError?>(nil)
        Thread {
            do throws(CredentialVaultError) { _ = try client.retrieveSecret() } catch { outcome.withLock { $0 = error } }
            done.signal()
        }.start()
        let waited = ContinuousClock.now
        while portal.recorded.requestPaths.isEmpty && waited.duration(to: .now) < TestEnvironment.timeout { usleep(5000) }
        let path = try #require(portal.recorded.requestPaths.first)
        impostor.emitResponse(1, path: path)
        impostor.emitResponse(0, path: path)
        #expect(done.wait(timeout: .now() + 60) == .success)
        // Neither "locked" (the impostor's 1) nor a read of the pipe (its 0): the portal never answered.
        #expect(outcome.withLock { $0 } == .timedOut)
    }
}

/// Inside a sandbox without a Secret portal, the automatic choice fails with a typed error:
/// no vault is made under a weaker custody, and no file is left behind.
@Suite(.ownThread, .privateKeyring)
struct SandboxWithoutPortalTests {
    static func blockingOpen(_ resolver: BackendResolver) throws -> BackendSelection { try resolver.open() }

    @Test func theAutomaticChoiceInASandboxWithoutAPortalIsNotAvailableAndCreatesNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("no-portal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = directory.appendingPathComponent("data/default.cvault")
        var configuration = SealedFileConfiguration(device: DeviceIdentity(hostSecretURL: directory.appendingPathComponent("state/host-secret"), machineID: "0123456789abcdef0123456789abcdef"))
        configuration.lockTimeout = .seconds(5)
        var resolver = BackendResolver(application: try ApplicationIdentifier("org.example.App"), environment: [:], sealedFileURL: vault, sealedFile: configuration)
        resolver.sandbox = Sandbox(kind: .flatpak, applicationID: "org.example.App")
        resolver.portal = SecretPortal(
            sandbox: resolver.sandbox, busAddress: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
            portalName: "org.example.NoSuchPortal", callTimeout: .seconds(10))
        #expect {
            _ = try Self.blockingOpen(resolver)
        } throws: { error in
            if case .notAvailable = error as? CredentialVaultError { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: vault.path))
        await #expect {
            _ = try await resolver.open()
        } throws: { error in
            if case .notAvailable = error as? CredentialVaultError { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: vault.path))
    }
}
