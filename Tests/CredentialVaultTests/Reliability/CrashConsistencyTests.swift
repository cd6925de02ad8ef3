import CredentialVaultTestPlans
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// SIGKILL at random moments: a writer storing and deleting, a passphrase change loop, a key
/// rotation loop. After every kill the vault opens, authenticates, and holds exactly what was
/// acknowledged (plus, at most, the one operation in flight).
/// Kills per scenario: CREDVAULT_CRASH_KILLS (default 20; `scripts/reliability/crash.sh --kills N`).
@Suite(.ownThread, .serialized) final class CrashConsistencyTests {
    let dir = TempDirectory()
    let kills = ReliabilitySettings.kills

    /// A random moment: right after launch (during open) one time in eight, else up to 30 ms
    /// after the helper reported it is ready (inside the write loop).
    private func killAtRandomMoment(_ helper: HelperProcess, readyLine: String) throws {
        if Int.random(in: 0..<8) != 0 {
            try helper.waitForLine(startingWith: readyLine)
            usleep(UInt32.random(in: 0...30_000))
        }
        helper.kill()
    }

    @Test func sigkillDuringWritesLosesNoAcknowledgedCredential() throws {
        let keyFile = try TestVault.keyFile(dir)
        let url = try TestVault.create(dir, secret: .keyFile(keyFile)).url
        var expected: [CredentialKey: Data] = [:]
        var stats = CrashStats()
        for round in 0..<kills {
            let plan = CrashPlan(prefix: "r\(round)")
            let helper = try HelperProcess(
                ["crash-writer", url.path, keyFile.path, plan.prefix], environment: HelperProcess.environment(dir))
            try killAtRandomMoment(helper, readyLine: "ready")
            let acked = helper.lastNumber(after: "ack")
            stats.note(tempFiles: VaultDirectory.tempFiles(of: url))

            let store = try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
            let actual = try VaultDirectory.contents(of: store)
            let roundActual = actual.filter { $0.key.account.hasPrefix(plan.prefix + "-") }
            let done = plan.state(after: acked + 1)
            let inFlight = plan.state(after: acked + 2)
            #expect(
                roundActual == done || roundActual == inFlight,
                "round \(round): \(acked + 1) steps acknowledged; the vault holds \(roundActual.count) records of this round")
            if roundActual != done { stats.inFlightApplied += 1 }
            #expect(actual.filter { !$0.key.account.hasPrefix(plan.prefix + "-") } == expected, "earlier rounds untouched")
            expected.merge(roundActual) { $1 }
            stats.acknowledged += acked + 1
        }
        // The next write sweeps the temp files that killed writers left behind.
        let store = try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        try store.save(Data("after".utf8), for: CredentialKey(service: "s", account: "after"), options: .portable)
        #expect(VaultDirectory.tempFiles(of: url).isEmpty, "no temp file outlives the next write")
        print("crash/writes: \(kills) kills, \(stats)")
    }

    @Test func sigkillDuringPassphraseChangeOpensWithTheOldOrTheNewPassphrase() throws {
        let files = try ["A", "B"].map { name in
            let url = dir.path("passphrase-\(name)")
            try TestVault.write(Array("passphrase \(name) for the crash test".utf8), to: url)
            return url
        }
        let keys: [VaultSecret] = ["A", "B"].map { .passphrase("passphrase \($0) for the crash test") }
        let store = try TestVault.create(dir, secret: keys[0])
        let records = try VaultDirectory.fill(store, count: 12)
        var openedWith = ["A": 0, "B": 0]
        var stats = CrashStats()
        for round in 0..<kills {
            let helper = try HelperProcess(
                ["change-secret-loop", store.url.path, files[0].path, files[1].path], environment: HelperProcess.environment(dir))
            try killAtRandomMoment(helper, readyLine: "ready")
            stats.note(tempFiles: VaultDirectory.tempFiles(of: store.url))
            var opened: [String] = []
            for (name, key) in zip(["A", "B"], keys) {
                do {
                    let reopened = try SealedFileStore.open(at: store.url, secret: key, configuration: TestVault.configuration(dir))
                    #expect(try VaultDirectory.contents(of: reopened) == records, "round \(round): records intact")
                    opened.append(name)
                } catch CredentialVaultError.wrongPassphrase {
                    continue
                }
            }
            #expect(opened.count == 1, "round \(round): opens with exactly one of the passphrases, got \(opened)")
            for name in opened { openedWith[name, default: 0] += 1 }
            stats.acknowledged += max(helper.lines.filter { $0.hasPrefix("key ") }.count, 0)
        }
        print("crash/change-key: \(kills) kills, opened with A \(openedWith["A"]!)x, B \(openedWith["B"]!)x, \(stats)")
    }

    @Test func sigkillDuringKeyRotationLeavesEveryRecordReadable() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let records = try VaultDirectory.fill(store, count: 12)
        var stats = CrashStats()
        for round in 0..<kills {
            let helper = try HelperProcess(["rotate-loop", store.url.path, keyFile.path], environment: HelperProcess.environment(dir))
            try killAtRandomMoment(helper, readyLine: "ready")
            stats.note(tempFiles: VaultDirectory.tempFiles(of: store.url))
            stats.acknowledged += max(helper.lastNumber(after: "rotated"), 0)
            let reopened = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
            #expect(try VaultDirectory.contents(of: reopened) == records, "round \(round): every record opens with its value")
        }
        print("crash/rotate: \(kills) kills, \(stats)")
    }

    /// The state a power cut (or SIGKILL) between creation's link and unlink leaves when the
    /// file system has no `RENAME_NOREPLACE` rename: the new vault also named by its own temp
    /// file. It opens, for reading and for writing, and loses that second name; any other
    /// second name, a temp-like name of another vault's, or a temp name on another file, still
    /// counts.
    @Test func aCreationCutBetweenItsLinkAndItsUnlinkLeavesAVaultThatOpens() throws {
        let store = try TestVault.create(dir)
        let key = CredentialKey(service: "s", account: "created")
        try store.save(Data("v".utf8), for: key, options: .portable)
        let url = store.url
        let leftover = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-4242-0123456789abcdef")
        #expect(link(url.path, leftover.path) == 0)
        let reopened = try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(key) == Data("v".utf8))
        #expect(VaultDirectory.tempFiles(of: url).isEmpty, "the leftover name is removed")
        try reopened.save(Data("w".utf8), for: key, options: .portable)

        // Names that are not this vault's own creation leftover are still a second name.
        let directory = url.deletingLastPathComponent()
        for name in [".\(url.lastPathComponent).tmp-4242-0123", ".other.cvault.tmp-4242-0123456789abcdef", "copy.cvault"] {
            let second = directory.appendingPathComponent(name)
            #expect(link(url.path, second.path) == 0)
            let error = #expect(throws: CredentialVaultError.self, "\(name)") {
                try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(self.dir))
            }
            if case .invalidArgument(let message)? = error, message.contains("2 hard links") {} else {
                Issue.record("\(name): \(String(describing: error))")
            }
            unlink(second.path)
        }
        // A temp name on another file is not removed.
        let unrelated = directory.appendingPathComponent(".\(url.lastPathComponent).tmp-4243-0123456789abcdef")
        #expect(FileManager.default.createFile(atPath: unrelated.path, contents: Data("x".utf8)))
        let again = try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try again.load(key) == Data("w".utf8))
        #expect(FileManager.default.fileExists(atPath: unrelated.path))
    }
}

/// What the kills hit, printed as evidence that they landed inside writes.
struct CrashStats: CustomStringConvertible {
    var acknowledged = 0
    var inFlightApplied = 0
    var killedMidWrite = 0
    private var seenTempFiles: Set<String> = []

    mutating func note(tempFiles: [String]) {
        let fresh = Set(tempFiles).subtracting(seenTempFiles)
        if !fresh.isEmpty { killedMidWrite += 1 }
        seenTempFiles.formUnion(tempFiles)
    }

    var description: String {
        "\(acknowledged) acknowledged operations, \(killedMidWrite) kills left a temp file (mid-write), "
            + "\(inFlightApplied) in-flight operations found applied"
    }
}

/// Reading a whole vault and its directory.
enum VaultDirectory {
    /// Every record, ephemeral ones aside, with its value (device-only ones opened too).
    static func contents(of store: SealedFileStore) throws -> [CredentialKey: Data] {
        var result: [CredentialKey: Data] = [:]
        for key in try store.listKeys() { result[key] = try store.load(key) }
        return result
    }

    /// Saves `count` records, alternating device-only and portable; returns them.
    static func fill(_ store: SealedFileStore, count: Int) throws -> [CredentialKey: Data] {
        var records: [CredentialKey: Data] = [:]
        for i in 0..<count {
            let key = CredentialKey(service: "fill", account: "record-\(i)")
            let value = Data((0..<(i * 13 % 50)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
            try store.save(value, for: key, options: i % 2 == 0 ? .default : .portable)
            records[key] = value
        }
        return records
    }

    /// Temp files of atomic writes of the vault at `url` that are still in its directory.
    static func tempFiles(of url: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        return names.filter { $0.hasPrefix(".\(url.lastPathComponent).tmp-") }.sorted()
    }
}
