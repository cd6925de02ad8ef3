import CredentialVault
import CredentialVaultSecretService
import Foundation
import Synchronization

/// Key custody: unlocking a device-key vault per custodian beside the host-secret
/// file's (today's device key) and a key file; a save with a rollback counter beside the same
/// save without one and beside the counter's own read + increment, in the same run. The
/// keyring rows need the private keyring (`scripts/with-keyring.sh`), the TPM rows a TPM
/// (`$CREDVAULT_TPM_TCTI`, e.g. swtpm: swtpm latency is not hardware latency).
enum CustodyGroup {
    static let title = "Key custody: unlock per custodian, save with a rollback counter"

    /// The custodians this run can use besides the host-secret file, by name.
    static func custodians(_ workspace: Workspace) -> [(String, any DeviceCustodian)] {
        var found: [(String, any DeviceCustodian)] = []
        if ProcessInfo.processInfo.environment["CREDVAULT_TEST_KEYRING"] == "unlocked" { found.append(("keyring", KeyringCustodian())) }
        return found + TPMBench.custodians(directory: workspace.hostStateDirectory)
    }

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        reporter.begin(title)
        let directory = try workspace.directory("custody")
        let value = Data(repeating: 0x5A, count: 128)
        let key = CredentialKey(service: "bench", account: "custody")

        // Unlock: the key file and today's device key, then each custodian's device key.
        let keyFile = try workspace.makeKeyFile("custody.key")
        var rows: [(String, VaultSecret, SealedFileConfiguration)] = [
            ("key_file", .keyFile(keyFile), workspace.configuration), ("device_file", .device, workspace.configuration),
        ]
        for (name, custodian) in custodians(workspace) {
            var configuration = workspace.configuration
            let counting = CountingCustodian(custodian)
            configuration.custody = custodian.custody
            configuration.custodians = [counting]
            rows.append(("device_\(name)", .device, configuration))
        }
        var fileUnlock: Figure?
        for (name, vaultKey, configuration) in rows {
            let url = directory.appendingPathComponent("unlock-\(name).cvault")
            var plain = configuration
            plain.rollbackCounter = false
            try SealedFileStore.create(at: url, secret: vaultKey, configuration: plain).save(value, for: key, options: .default)
            let counting = configuration.custodians.first as? CountingCustodian
            counting?.reset()
            var unlocks = 0
            let sample = try Timer.measure(Plan.fast(options)) {
                unlocks += 1
                blackHole(try SealedFileStore.open(at: url, secret: vaultKey, configuration: plain))
            }
            var figure = Figure(group: title, name: "custody_unlock_\(name)", sample: sample)
            if let fileUnlock, name != "key_file" { figure.relate(to: fileUnlock) }
            if let counting {
                let perUnlock = Double(counting.secrets) / Double(unlocks)
                figure.extra = [JSONField("custodian_secrets_per_unlock", .double(perUnlock))]
                figure.checks.append(.exactly("custodian secrets (TPM unseals) per unlock", perUnlock, 1))
            }
            if name == "device_file" { fileUnlock = figure }
            reporter.add(figure)
        }

        // Save: without a counter, with one per custodian, and the counter's read + increment.
        let plainURL = directory.appendingPathComponent("save-plain.cvault")
        let plainStore = try SealedFileStore.create(at: plainURL, secret: .keyFile(keyFile), configuration: workspace.configuration)
        let fileCustodian = HostFileCustodian(directory: workspace.hostStateDirectory)
        for (name, real) in [("file", fileCustodian as any DeviceCustodian)] + custodians(workspace) {
            let counting = CountingCustodian(real)
            var configuration = workspace.configuration
            configuration.custody = real.custody
            configuration.custodians = [counting]
            configuration.rollbackCounter = true
            let url = directory.appendingPathComponent("save-\(name).cvault")
            let store = try SealedFileStore.create(at: url, secret: .keyFile(keyFile), configuration: configuration)
            // The counter alone, on a counter of its own (the real custodian: not counted).
            let binding = SecureBytes.random(count: 32)
            let probeID = (0..<16).map { UInt8($0) }
            let probe = try real.createCounter(vaultID: probeID, binding: binding)
            defer { try? real.removeCounter(vaultID: probeID, reference: probe.reference, binding: binding) }
            counting.reset()
            var saves = 0
            let samples = try Timer.measureInterleaved(Plan.durable(options), [
                Timed { try plainStore.save(value, for: key, options: .default) },
                Timed {
                    saves += 1
                    try store.save(value, for: key, options: .default)
                },
                Timed {
                    _ = try real.readCounter(vaultID: probeID, reference: probe.reference, binding: binding)
                    try real.incrementCounter(vaultID: probeID, reference: probe.reference, binding: binding)
                },
            ])
            let plain = Figure(group: title, name: "custody_save_no_counter_\(name)", sample: samples[0])
            var ours = Figure(group: title, name: "custody_save_counter_\(name)", sample: samples[1])
            ours.relate(to: plain)
            let raw = Figure(group: title, name: "custody_counter_read_increment_\(name)", sample: samples[2])
            let perSave = Double(counting.increments) / Double(saves)
            let readsPerSave = Double(counting.reads) / Double(saves)
            ours.extra = [
                JSONField("plus_counter_ms", .double(samples[1].median - samples[0].median)),
                JSONField("increments_per_save", .double(perSave)), JSONField("counter_reads_per_save", .double(readsPerSave)),
            ]
            ours.checks.append(.exactly("counter increments per save", perSave, 1))
            ours.checks.append(.exactly("counter reads per save", readsPerSave, 1))
            reporter.add(plain)
            reporter.add(ours)
            reporter.add(raw)
        }
        reporter.note("custody_unlock_device_*: a device-key vault under each custody, relative to the host-secret file's; custodian_secrets_per_unlock counts the custodian's deviceSecret calls (a TPM unseal each). custody_save_counter_*: a durable save with a rollback counter at that custodian beside custody_save_no_counter_* (the same save, no counter) and custody_counter_read_increment_* (the counter's read and increment alone), interleaved. TPM rows on swtpm: not hardware latency.")
        reporter.end()
    }
}

/// A custodian that counts the calls it passes on (secrets released, increments).
final class CountingCustodian: DeviceCustodian {
    let real: any DeviceCustodian
    private let lock = Mutex<(secrets: Int, increments: Int, reads: Int)>((0, 0, 0))

    init(_ real: any DeviceCustodian) { self.real = real }

    var custody: DeviceCustody { real.custody }
    var secrets: Int { lock.withLock { $0.secrets } }
    var increments: Int { lock.withLock { $0.increments } }
    var reads: Int { lock.withLock { $0.reads } }
    func reset() { lock.withLock { $0 = (0, 0, 0) } }

    func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        lock.withLock { $0.secrets += 1 }
        return try real.deviceSecret(binding: binding, create: create)
    }
    func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        try real.createCounter(vaultID: vaultID, binding: binding)
    }
    func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        lock.withLock { $0.reads += 1 }
        return try real.readCounter(vaultID: vaultID, reference: reference, binding: binding)
    }
    func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        lock.withLock { $0.increments += 1 }
        try real.incrementCounter(vaultID: vaultID, reference: reference, binding: binding)
    }
    func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        try real.removeCounter(vaultID: vaultID, reference: reference, binding: binding)
    }
}
