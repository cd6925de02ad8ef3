import CredentialVaultTestSupport
import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultTPM

#if canImport(Glibc)
import Glibc
#endif

/// The TPM custodian's device secret against a real software TPM (swtpm), each test with a TPM
/// of its own: sealed and unsealed, refused by another TPM, by another binding, by changed
/// PCRs; no TPM and a busy TPM give typed errors, the busy one at its deadline while the TPM
/// is still busy (outcomes under ceilings, never latencies).
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMCustodianTests {
    let tpm: SoftwareTPM
    let scratch = ScratchDirectory()
    let binding = SecureBytes.random(count: 32)

    init() async throws { tpm = try await offThePool { try SoftwareTPM() } }

    func custodian(_ tpm: SoftwareTPM? = nil, directory: String? = nil, pcrs: [Int] = [], deadline: Duration = TPMTest.deadline) -> TPMCustodian {
        TPMCustodian(configuration: TPMConfiguration(
            tcti: (tpm ?? self.tpm).tcti, directory: directory ?? scratch.sub("state/credential-vault"), pcrs: pcrs, deadline: deadline))
    }

    @Test func sealsOnceThenUnsealsTheSameSecretAcrossARestart() async throws {
        try await offThePool {
            let custodian = custodian()
            // Nothing sealed yet and create false: notAvailable naming the file, nothing made.
            #expect {
                try custodian.deviceSecret(binding: binding, create: false)
            } throws: { error in
                guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                return message.contains(custodian.configuration.path)
            }
            #expect(!FileManager.default.fileExists(atPath: custodian.configuration.path))

            let made = try custodian.deviceSecret(binding: binding, create: true)
            #expect(made.count == 32)
            let again = try custodian.deviceSecret(binding: binding, create: true)
            #expect(made.constantTimeEquals(again), "create with a sealed secret present must unseal it, not make another")

            // The blob: 0600 in a 0700 directory, and no copy of the secret in it.
            var info = stat()
            #expect(stat(custodian.configuration.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(stat(custodian.configuration.directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
            let blob = try Data(contentsOf: URL(fileURLWithPath: custodian.configuration.path))
            #expect(made.withUnsafeBytes { secret in blob.range(of: Data(secret)) == nil })

            try tpm.restart()
            #expect(try custodian.deviceSecret(binding: binding, create: false).constantTimeEquals(made))
        }
    }

    @Test func anotherTPMRefusesTheBlobSayingItNoLongerHoldsTheKey() async throws {
        try await offThePool {
            _ = try custodian().deviceSecret(binding: binding, create: true)
            let other = try SoftwareTPM()
            let elsewhere = custodian(other)
            for create in [false, true] {
                #expect {
                    try elsewhere.deviceSecret(binding: binding, create: create)
                } throws: { error in
                    guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                    return message.contains("no longer holds the key") && message.contains("another machine's TPM")
                }
            }
            // Still the first TPM's blob: nothing was re-sealed over it.
            #expect(throws: Never.self) { try self.custodian().deviceSecret(binding: self.binding, create: false) }
        }
    }

    @Test func anotherBindingCannotUnseal() async throws {
        try await offThePool {
            let secret = try custodian().deviceSecret(binding: binding, create: true)
            for other in [SecureBytes.random(count: 32), SecureBytes(count: 32)] {
                #expect {
                    try self.custodian().deviceSecret(binding: other, create: true)
                } throws: { error in
                    guard case .permissionDenied(let message) = error as? CredentialVaultError else { return false }
                    return message.contains("another user or with another host secret")
                }
            }
            #expect(try custodian().deviceSecret(binding: binding, create: false).constantTimeEquals(secret))
        }
    }

    @Test func pcrBoundSecretIsRefusedAfterAnExtendAndOpensAfterReset() async throws {
        try await offThePool {
            let bound = custodian(pcrs: [16])
            let secret = try bound.deviceSecret(binding: binding, create: true)
            #expect(try bound.deviceSecret(binding: binding, create: false).constantTimeEquals(secret))

            try tpm.tool("tpm2_pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
            #expect {
                try bound.deviceSecret(binding: self.binding, create: true)
            } throws: { error in
                guard case .permissionDenied(let message) = error as? CredentialVaultError else { return false }
                return message.contains("PCR values it is bound to changed")
            }
            try tpm.tool("tpm2_pcrreset", ["16"])
            #expect(try bound.deviceSecret(binding: binding, create: false).constantTimeEquals(secret))

            // The PCR binding still needs the binding (PolicyAuthValue), and a configuration
            // without the PCRs does not open it with a weaker policy.
            #expect {
                try bound.deviceSecret(binding: SecureBytes.random(count: 32), create: false)
            } throws: { error in
                guard case .permissionDenied = error as? CredentialVaultError else { return false }
                return true
            }
            #expect {
                try self.custodian().deviceSecret(binding: self.binding, create: false)
            } throws: { error in
                guard case .invalidArgument(let message) = error as? CredentialVaultError else { return false }
                return message.contains("sha256:16")
            }
        }
    }

    /// No TPM there: `notAvailable` at once, not at the deadline (set to 10 minutes, many times
    /// the ceiling), and nothing is made.
    @Test func noTPMIsNotAvailableAtOnce() async throws {
        try await offThePool {
            for tcti in ["swtpm:path=\(scratch.sub("no-such-socket"))", "device:/dev/credvault-no-such-tpm"] {
                let custodian = TPMCustodian(configuration: TPMConfiguration(tcti: tcti, directory: scratch.sub("none"), deadline: .seconds(600)))
                let binding = binding
                let outcomes = try withThreadCeiling("a custodian without a TPM") {
                    (Result { try custodian.deviceSecret(binding: binding, create: true) }.map { _ in () },
                     Result { try custodian.createCounter(vaultID: [1], binding: binding) }.map { _ in () })
                }
                for outcome in [outcomes.0, outcomes.1] {
                    #expect {
                        try outcome.get()
                    } throws: { error in
                        guard case .notAvailable(let message) = error as? CredentialVaultError else { return false }
                        return message.contains("no TPM at \(tcti)")
                    }
                }
            }
            #expect(!FileManager.default.fileExists(atPath: scratch.sub("none")))
        }
    }

    /// Another client holds swtpm's one connection: each call gives `timedOut` at its own
    /// deadline (never early), while the TPM is still held; with two workers still waiting for
    /// the TPM, a third call waits for one of them within its own deadline, not for the TPM.
    @Test func aBusyTPMTimesOutAtItsDeadline() async throws {
        try await offThePool {
            _ = try custodian().deviceSecret(binding: binding, create: true)
            let holder = try UnixConnection(path: "\(tpm.directory)/sock")
            for deadline in [Duration.milliseconds(500), .milliseconds(300), .milliseconds(300)] {
                let custodian = custodian(deadline: deadline)
                let binding = binding
                let started = ContinuousClock.now
                let outcome = try withThreadCeiling("a call to a busy TPM with a \(deadline) deadline") {
                    Result { try custodian.deviceSecret(binding: binding, create: false) }.map { _ in () }
                }
                #expect(throws: CredentialVaultError.timedOut) { try outcome.get() }
                #expect(started.duration(to: .now) >= deadline, "a deadline is never early")
                #expect(holder.isOpen, "the TPM was still held")
            }
            holder.close()
            // Once the other client is gone, the TPM answers again (after the abandoned workers).
            #expect(throws: Never.self) { try self.custodian().deviceSecret(binding: self.binding, create: false) }
        }
    }

    @Test func aDamagedBlobIsCorruptedAndAShortBindingRefused() async throws {
        try await offThePool {
            let custodian = custodian()
            _ = try custodian.deviceSecret(binding: binding, create: true)
            let path = custodian.configuration.path
            let whole = try Data(contentsOf: URL(fileURLWithPath: path))
            for damaged in [whole.prefix(whole.count - 7), whole + Data([0]), whole.prefix(6)] {
                try Data(damaged).write(to: URL(fileURLWithPath: path))
                #expect {
                    try custodian.deviceSecret(binding: self.binding, create: true)
                } throws: { error in
                    guard case .corrupted(let message) = error as? CredentialVaultError else { return false }
                    return message.contains(path)
                }
            }
            for short in [SecureBytes(count: 0), SecureBytes.random(count: 8), SecureBytes.random(count: 65)] {
                for operation in [{ _ = try custodian.deviceSecret(binding: short, create: true) }, { _ = try custodian.createCounter(vaultID: [1], binding: short) }]
                    as [() throws -> Void]
                {
                    #expect {
                        try operation()
                    } throws: { error in
                        guard case .invalidArgument = error as? CredentialVaultError else { return false }
                        return true
                    }
                }
            }
        }
    }

    @Test func badConfigurationIsRefusedBeforeTouchingTheTPM() {
        for configuration in [
            TPMConfiguration(tcti: "", directory: "/tmp/x"), TPMConfiguration(tcti: tpm.tcti, directory: "relative"),
            TPMConfiguration(tcti: tpm.tcti, directory: "/tmp/x", fileName: "a/b"),
            TPMConfiguration(tcti: tpm.tcti, directory: "/tmp/x", pcrs: [24]),
            TPMConfiguration(tcti: tpm.tcti, directory: "/tmp/x", deadline: .zero),
        ] {
            #expect {
                try TPMCustodian(configuration: configuration).deviceSecret(binding: self.binding, create: true)
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
        }
    }
}

/// A raw connection to a UNIX socket, held open (a client that keeps swtpm busy).
final class UnixConnection {
    private var fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8).prefix($0.count - 1)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw SoftwareTPM.ScriptFailure(description: "cannot connect to \(path)") }
    }

    /// Whether it is still open (not closed yet).
    var isOpen: Bool { fd >= 0 }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
