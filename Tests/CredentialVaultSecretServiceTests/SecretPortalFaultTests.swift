import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// The portal client against a stub frontend (`StubSecretPortal`) on the private test bus,
/// for what the real portal cannot be made to do: every fault gives a typed error, never a
/// crash or a hang, and an abandoned request is closed.
@Suite(.ownThread, .privateKeyring)
struct SecretPortalFaultTests {
    static let sandbox = Sandbox(kind: .flatpak, applicationID: "org.example.Stubbed")

    func client(_ stub: StubSecretPortal, response: Duration = .seconds(60)) -> SecretPortal {
        SecretPortal(
            sandbox: Self.sandbox, busAddress: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
            portalName: stub.uniqueName, callTimeout: TestEnvironment.timeout, responseTimeout: response, readTimeout: TestEnvironment.timeout)
    }

    func failure(_ behaviour: StubSecretPortal.Behaviour, version: UInt32 = 1) throws -> (CredentialVaultError?, StubSecretPortal.Record) {
        let stub = try StubSecretPortal(behaviour: behaviour, version: version)
        defer { stub.stop() }
        do {
            _ = try client(stub).retrieveSecret()
            return (nil, stub.recorded)
        } catch {
            return (error, stub.recorded)
        }
    }

    @Test func sixtyFourBytesAreTheSecretReadFromThePipe() throws {
        let stub = try StubSecretPortal(behaviour: .answer(response: 0, bytes: 64))
        defer { stub.stop() }
        let secret = try client(stub).retrieveSecret()
        #expect(secret.withUnsafeBytes { Array($0) } == StubSecretPortal.pattern(64))
        // The request's path was the one computed before the call (the signal subscribed first).
        #expect(stub.recorded.requestPaths.count == 1)
    }

    @Test func sixtyThreeBytesAreAnIOErrorNamingTheCount() throws {
        let (error, _) = try failure(.answer(response: 0, bytes: 63))
        guard case .io(let message) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("63 bytes"))
    }

    @Test func sixtyFiveBytesAreAnIOError() throws {
        let (error, _) = try failure(.answer(response: 0, bytes: 65))
        guard case .io(let message) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("more than 64"))
    }

    @Test func responseOneMeansTheKeyringStayedLocked() throws {
        #expect(try failure(.answer(response: 1, bytes: 0)).0 == .locked)
    }

    @Test func responseTwoMeansThePortalFailed() throws {
        let (error, _) = try failure(.answer(response: 2, bytes: 0))
        guard case .notAvailable = error else { Issue.record("\(String(describing: error))"); return }
    }

    /// The portal's answer with another signature is an error at once, not a wait for an
    /// answer until the deadline (then misreported as `timedOut`).
    @Test func aResponseOfAnotherSignatureIsAnIOError() throws {
        let (error, _) = try failure(.malformedResponse)
        guard case .io(let message) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("(ua{sv})"))
    }

    @Test func anotherVersionIsRefusedBeforeAnyRequest() throws {
        let (error, record) = try failure(.answer(response: 0, bytes: 64), version: 2)
        guard case .notAvailable(let message) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("version 2"))
        #expect(record.retrieveCalls == 0)
    }

    @Test func anAnswerThatNeverComesTimesOutAndClosesTheRequest() throws {
        let stub = try StubSecretPortal(behaviour: .never)
        defer { stub.stop() }
        #expect(throws: CredentialVaultError.timedOut) { try client(stub, response: .milliseconds(200)).retrieveSecret() }
        #expect(stub.recorded.closedPaths == stub.recorded.requestPaths)
        #expect(stub.recorded.closedPaths.count == 1)
    }

    @Test func cancellingTheTaskClosesTheRequestAndThrowsCancelled() async throws {
        let stub = try StubSecretPortal(behaviour: .never)
        defer { stub.stop() }
        let portal = client(stub)
        let task = Task { try await portal.retrieveSecret() }
        // Cancelled once the request is with the portal (a latch on the stub's record).
        let waited = ContinuousClock.now
        while stub.recorded.retrieveCalls == 0 && waited.duration(to: .now) < TestEnvironment.timeout { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await #expect(throws: CredentialVaultError.cancelled) { try await task.value }
        #expect(stub.recorded.closedPaths.count == 1)
        #expect(stub.recorded.closedPaths == stub.recorded.requestPaths)
    }

    @Test func outsideASandboxNothingIsAsked() throws {
        let stub = try StubSecretPortal(behaviour: .answer(response: 0, bytes: 64))
        defer { stub.stop() }
        var portal = client(stub)
        portal = SecretPortal(sandbox: nil, busAddress: portal.busAddress, portalName: portal.portalName)
        #expect {
            try portal.retrieveSecret()
        } throws: { error in
            if case .unsupported = error as? CredentialVaultError { return true }
            return false
        }
        #expect(stub.recorded.retrieveCalls == 0)
    }
}
