import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// gnome-keyring's real Secret portal backend (`org.freedesktop.impl.portal.Secret`), called
/// directly as xdg-desktop-portal calls it (`PortalSecretBackend`).
@Suite(.ownThread)
struct PortalBackendTests {
    @Test(.privateKeyring) func theSameAppIDGetsTheSameSecretAndAnotherAppIDAnother() throws {
        let backend = PortalSecretBackend(timeout: TestEnvironment.timeout)
        let first = try backend.retrieveSecret(applicationID: "org.example.PortalA")
        let again = try backend.retrieveSecret(applicationID: "org.example.PortalA")
        let other = try backend.retrieveSecret(applicationID: "org.example.PortalB")
        #expect(first.count == 64 && other.count == 64)
        #expect(first.constantTimeEquals(again))
        #expect(!first.constantTimeEquals(other))
    }

    @Test(.throwAwayBuses) func aLockedLoginCollectionIsReportedLocked() throws {
        let steps = try runProbe(busMode: "--locked", timeoutMilliseconds: TestEnvironment.timeoutMilliseconds, ["portal-backend:org.example.PortalA"])
        #expect(steps.first?.outcome == "error:locked", "\(steps)")
    }

    @Test(.throwAwayBuses) func noDaemonIsNotAvailable() throws {
        let steps = try runProbe(busMode: "--no-provider", timeoutMilliseconds: TestEnvironment.timeoutMilliseconds, ["portal-backend:org.example.PortalA"])
        #expect(steps.first?.outcome == "error:notAvailable", "\(steps)")
    }

    @Test(.throwAwayBuses) func aSecondRunOnTheSameKeyringGetsTheSameSecret() throws {
        let steps = try runProbe(
            busMode: "--unlocked", timeoutMilliseconds: TestEnvironment.timeoutMilliseconds,
            ["portal-backend:org.example.PortalA", "portal-backend:org.example.PortalB", "portal-backend:org.example.PortalA"])
        #expect(steps.map(\.outcome) == ["secret:0", "secret:1", "secret:0"], "\(steps)")
    }
}
