import CredentialVault
import CredentialVaultTPM
import Foundation

/// Group 5: TPM custody's per-operation costs: unsealing the device secret (what TPM custody
/// adds to an unlock) and a rollback counter increment (what rollback protection adds to a
/// save), beside the floor of one TPM connection (connect, one command, the scrubbing command,
/// finalize), measured in turn.
///
/// Runs only when a TPM is named by `CREDVAULT_BENCH_TPM_TCTI` (or `CREDVAULT_TEST_TPM_TCTI`,
/// which `scripts/services/swtpm.sh` prints). It seals a secret and defines one NV counter
/// there, and removes the counter at the end. **Against swtpm these are software-TPM figures,
/// not hardware latency**: a discrete TPM is slower (tens of ms for ECC operations is common),
/// its NV writes are rate-limited and wear.
enum TPMGroup {
    static let title = "TPM custody: unseal and NV counter (software TPM figures are not hardware latency)"

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        reporter.begin(title)
        defer { reporter.end() }
        let environment = ProcessInfo.processInfo.environment
        guard let tcti = environment["CREDVAULT_BENCH_TPM_TCTI"] ?? environment["CREDVAULT_TEST_TPM_TCTI"] else {
            reporter.note("skipped: no TPM named (CREDVAULT_BENCH_TPM_TCTI=device:/dev/tpmrm0, or scripts/services/swtpm.sh start)")
            return
        }
        let directory = try workspace.directory("tpm")
        let custodian = TPMCustodian(configuration: TPMConfiguration(tcti: tcti, directory: directory.path))
        let binding = SecureBytes.random(count: 32)
        let vaultID = (0..<16).map { _ in UInt8.random(in: 0...255) }
        _ = try custodian.deviceSecret(binding: binding, create: true)
        let counter = try custodian.createCounter(vaultID: vaultID, binding: binding)
        defer { try? custodian.removeCounter(vaultID: vaultID, reference: counter.reference, binding: binding) }
        // No index is defined here (the last of the owner range): one round trip that finds nothing.
        let absent: UInt32 = 0x013F_FFFF
        let samples = try Timer.measureInterleaved(Plan.slow(options, runs: 60), [
            { blackHole(try custodian.deviceSecret(binding: binding, create: false)) },
            { try custodian.incrementCounter(vaultID: vaultID, reference: counter.reference, binding: binding) },
            { blackHole(try custodian.readCounter(vaultID: vaultID, reference: counter.reference, binding: binding)) },
            { blackHole(try custodian.readCounter(vaultID: vaultID, reference: absent, binding: binding)) },
        ])
        let floor = Figure(group: title, name: "tpm_connection_floor", sample: samples[3])
        for (index, name) in ["tpm_unseal", "tpm_counter_increment", "tpm_counter_read"].enumerated() {
            var figure = Figure(group: title, name: name, sample: samples[index])
            figure.relate(to: floor)
            figure.extra = [JSONField("tcti", .string(tcti.hasPrefix("swtpm") ? "swtpm" : tcti))]
            reporter.add(figure)
        }
        reporter.add(floor)
        reporter.note(
            "tpm_unseal: a whole deviceSecret call (connect, ECC storage key, load, salted session, unseal, flush, one scrubbing command, finalize); tpm_counter_*: a whole call on an NV counter (HMAC session); tpm_connection_floor: connect, NV_ReadPublic of an absent index, the scrubbing command, finalize. TCTI \(tcti.hasPrefix("swtpm") ? "swtpm (software TPM: not hardware latency)" : tcti).")
    }
}
