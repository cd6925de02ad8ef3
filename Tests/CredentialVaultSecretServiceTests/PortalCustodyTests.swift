import CSodium
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// The portal custody's derivation, the sandbox detection and the automatic choice inside a
/// sandbox (no portal needed: nothing here asks one).
@Suite(.ownThread)
struct PortalCustodyTests {
    @Test func theDeviceSecretIsTheKeyedHashOfTheLabelUnderThePortalBytes() {
        let portalBytes = (0..<64).map { UInt8($0 * 3 & 0xff) }
        let derived = PortalCustodian.deviceSecret(from: SecureBytes(copying: portalBytes))
        // docs/FORMAT.md, custody 3: BLAKE2b-256 keyed with the 64 bytes over the label, computed
        // here with libsodium directly.
        let label = Array("CredentialVault portal device secret v1\u{0}".utf8)
        var expected = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash(&expected, 32, label, UInt64(label.count), portalBytes, 64)
        #expect(derived.withUnsafeBytes { Array($0) } == expected)
        #expect(Array(portalBytes.prefix(32)) != expected)
    }

    @Test func aFlatpakIsFoundByItsInfoFileWithItsAppID() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let info = directory.appendingPathComponent("flatpak-info")
        try Data("[Application]\nname=org.example.App\nruntime=runtime/org.gnome.Platform/x86_64/45\n\n[Instance]\nname=other\n".utf8)
            .write(to: info)
        #expect(Sandbox.detect(environment: [:], flatpakInfo: info.path) == Sandbox(kind: .flatpak, applicationID: "org.example.App"))
        // libsecret's test is existence alone: an unreadable or empty file is still a Flatpak.
        try Data().write(to: info)
        #expect(Sandbox.detect(environment: [:], flatpakInfo: info.path) == Sandbox(kind: .flatpak, applicationID: nil))
    }

    @Test func aSnapIsFoundBySnapNameEvenEmptyInASnapCgroup() throws {
        let missing = "/nonexistent/flatpak-info"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cgroup = directory.appendingPathComponent("cgroup")
        // What a strictly confined snap's process lists (cgroup v2, and v1's name=systemd).
        for snapLine in [
            "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.example.example-4d5e6f.scope",
            "1:name=systemd:/user.slice/user-1000.slice/user@1000.service/snap.example.example-4d5e6f.scope",
        ] {
            try Data("12:memory:/user.slice\n\(snapLine)\n".utf8).write(to: cgroup)
            #expect(
                Sandbox.detect(environment: ["SNAP_NAME": "example"], flatpakInfo: missing, cgroup: cgroup.path)
                    == Sandbox(kind: .snap, applicationID: "example"))
            #expect(Sandbox.detect(environment: ["SNAP_NAME": ""], flatpakInfo: missing, cgroup: cgroup.path)?.kind == .snap)
            #expect(Sandbox.detect(environment: [:], flatpakInfo: missing, cgroup: cgroup.path) == nil)
        }
        // Another controller's /snap. path is not the portal's test.
        try Data("12:memory:/snap.example.example-4d5e6f.scope\n0::/user.slice\n".utf8).write(to: cgroup)
        #expect(Sandbox.detect(environment: ["SNAP_NAME": "example"], flatpakInfo: missing, cgroup: cgroup.path) == nil)
    }

    /// A resolver made as inside a snap (the test process is not in one).
    static func resolverInASnap() throws -> BackendResolver {
        var resolver = BackendResolver(application: try ApplicationIdentifier("org.example.App"), environment: [:])
        resolver.sandbox = Sandbox(kind: .snap, applicationID: "example")
        resolver.portal = SecretPortal(sandbox: resolver.sandbox)
        return resolver
    }

    static func blockingDecision(_ resolver: BackendResolver) throws -> BackendDecision { try resolver.decide() }

    @Test func insideASandboxTheAutomaticChoiceIsTheSealedFileUnderPortalCustodyWithoutAskingTheSecretService() async throws {
        // A Secret Service that would answer (the private test bus, or none) is not asked: the
        // decision says why, with the sandbox's app id.
        var resolver = try Self.resolverInASnap()
        let decision = try Self.blockingDecision(resolver)
        #expect(decision.kind == .file && decision.custody == .portal)
        #expect(decision.reason == "inside a Snap sandbox (example): sealed file, device key from the Secret portal")
        #expect(decision.secretServiceStatus == nil)
        let asynchronous = try await resolver.decide()
        #expect(asynchronous == decision)
        // An explicit choice and CREDVAULT_BACKEND still win.
        resolver.environment["CREDVAULT_BACKEND"] = "memory"
        #expect(try Self.blockingDecision(resolver).kind == .memory)
        #expect(try Self.blockingDecision(resolver).custody == nil)
    }

    @Test func theSealedFileInASandboxOffersThePortalCustodian() throws {
        let resolver = try Self.resolverInASnap()
        let configuration = resolver.sealedFileConfiguration(for: try Self.blockingDecision(resolver))
        #expect(configuration.custody == .portal)
        #expect(configuration.custodians.contains { $0.custody == .portal })
    }

    @Test func outsideASandboxThePortalCustodianRefusesTyped() {
        let custodian = PortalCustodian(portal: SecretPortal(sandbox: nil))
        #expect {
            try custodian.deviceSecret(binding: SecureBytes.random(count: 32), create: true)
        } throws: { error in
            if case .unsupported = error as? CredentialVaultError { return true }
            return false
        }
    }
}

/// The whole chain through the real `credvault-full`, in the Flatpak sandbox of
/// scripts/sandbox/flatpak-sandbox.sh (bwrap, /.flatpak-info, xdg-dbus-proxy letting only
/// org.freedesktop.portal.* through, xdg-desktop-portal 1.16, gnome-keyring), on a throw-away
/// bus (Tests/Scripts/portal-sandbox-chain.sh).
@Suite(
    .ownThread, .throwAwayBuses,
    .enabled(if: SandboxHarness.runs, "bwrap cannot create a Flatpak sandbox's namespaces here (scripts/sandbox/flatpak-sandbox.sh --probe)"))
struct PortalSandboxChainTests {
    @Test func aSandboxedAppStoresAndReadsUnderPortalCustodyAndAnotherAppCannotOpenIt() throws {
        let chain = try SandboxChain.run("portal-sandbox-chain.sh")
        try #require(chain.status != 77, "the sandbox cannot run here: \(chain.stderr)")
        let expected: [(String, Int)] = [
            ("no-secret-service", 0), ("info-before", 0), ("store", 0), ("vault-under-portal-custody", 0), ("second-run-reads", 0), ("lean-reads", 0),
            ("custody-to-file", 0), ("custody-back-to-portal", 0), ("reads-after-moves", 0),
            ("other-app-cannot-open", 6),  // deviceMismatch: another app's portal secret, another device key
            ("other-app-store-refused", 6), ("other-app-vault-unchanged", 0),
            ("outside-sandbox-refused", 3),  // unsupported: the portal is never asked outside a sandbox
        ]
        chain.expect(expected)
    }
}

/// The Flatpak sandbox harness (scripts/sandbox/flatpak-sandbox.sh).
enum SandboxHarness {
    /// Whether it can run here (bwrap makes the namespaces): `--probe` exits 0.
    static let runs: Bool = {
        let probe = Process()
        probe.executableURL = TestEnvironment.packageRoot.appendingPathComponent("scripts/sandbox/flatpak-sandbox.sh")
        probe.arguments = ["--probe"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()
}
