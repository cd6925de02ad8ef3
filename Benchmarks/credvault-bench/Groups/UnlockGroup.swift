import CredentialVault
import Foundation

/// Group 2: the cost of opening a vault per kind of key: read the file, derive the
/// key-encryption key (Argon2id for a passphrase), unwrap the data key, authenticate the file.
enum UnlockGroup {
    static let title = "Unlock: open a vault (1 item) per key kind"
    static let passphrase = "correct horse battery staple"

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        reporter.begin(title)
        let directory = try workspace.directory("unlock")
        let configuration = workspace.configuration
        let presets: [(String, KDFParameters, Int)] = [("interactive", .interactive, 11), ("moderate", .moderate, 7)]
        for (preset, parameters, runs) in presets {
            let url = directory.appendingPathComponent("passphrase-\(preset).cvault")
            let key = VaultSecret.passphrase(passphrase)
            try populate(SealedFileStore.create(at: url, secret: key, kdf: parameters, configuration: configuration))
            let counter = PasswordDerivationCounter()
            var unlocks = 0
            let samples = try counter.counting {
                try Timer.measureInterleaved(Plan.slow(options, runs: runs), [
                    {
                        unlocks += 1
                        blackHole(try SealedFileStore.open(at: url, secret: key, configuration: configuration))
                    },
                    {
                        guard RawArgon2id.derive(opsLimit: parameters.opsLimit, memLimitBytes: parameters.memLimitBytes) else {
                            throw BenchError("crypto_pwhash failed")
                        }
                    },
                ])
            }
            let perUnlock = Double(counter.value) / Double(unlocks)
            let raw = Figure(group: title, name: "raw_argon2id_\(preset)", sample: samples[1])
            var ours = Figure(group: title, name: "unlock_\(preset)", sample: samples[0])
            ours.relate(to: raw)
            ours.extra = [JSONField("kdf", .string(parameters.description)), JSONField("derivations_per_unlock", .double(perUnlock))]
            ours.checks.append(.exactly("derivations per unlock", perUnlock, 1))
            reporter.add(ours)
            reporter.add(raw)
        }
        let keyFile = try workspace.makeKeyFile("unlock.key")
        let others: [(String, VaultSecret)] = [("key_file", .keyFile(keyFile)), ("device", .device)]
        for (name, key) in others {
            let url = directory.appendingPathComponent("\(name).cvault")
            try populate(SealedFileStore.create(at: url, secret: key, configuration: configuration))
            let counter = PasswordDerivationCounter()
            let sample = try counter.counting {
                try Timer.measure(Plan.fast(options)) {
                    blackHole(try SealedFileStore.open(at: url, secret: key, configuration: configuration))
                }
            }
            var figure = Figure(group: title, name: "unlock_\(name)", sample: sample)
            figure.extra = [JSONField("derivations_per_unlock", .double(Double(counter.value)))]
            figure.checks.append(.exactly("password derivations", Double(counter.value), 0))
            reporter.add(figure)
        }
        reporter.note("raw_argon2id_*: one `crypto_pwhash` with the same parameters; derivations counted with `PasswordDerivationCounter` over every unlock timed (warm-ups included).")
        reporter.end()
    }

    private static func populate(_ store: SealedFileStore) throws {
        try store.save(Data("a refresh token".utf8), for: CredentialKey(service: "api.example.com", account: "alice"), options: .default)
    }
}
