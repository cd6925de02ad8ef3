import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultSecretService
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `save` replaces an item in place, so `take` (read, then delete) must never interleave with
/// it: both hold the key's lock file. These tests race them across threads and processes and
/// check that a saved value is never lost, and that a held lock gives `busy`, never a hang.
@Suite(.ownThread, .privateKeyring)
struct SaveTakeLockTests {
    /// Each round: the key holds `old`; one thread takes while another saves `new`, released
    /// together by one start signal (whichever gets the lock first varies from round to round).
    /// Linearizable outcomes only: the take got `new` and nothing is left, or it got `old` and
    /// `new` is still there.
    @Test func aTakeRacingASaveNeverLosesTheSavedValue() async throws {
        try await offThePool {
            let fixture = IsolatedSecretServiceStore()
            let store = fixture.store
            let key = CredentialKey(service: "race", account: "verifier")
            for round in 0..<80 {
                let old = Data("old \(round)".utf8)
                let new = Data("new \(round)".utf8)
                try store.save(old, for: key)
                let taken = Shared<Result<Data?, CredentialVaultError>?>(nil)
                let saved = Shared<Result<Void, CredentialVaultError>?>(nil)
                // Two threads released together by one start signal (no head start guessed).
                let start = DispatchSemaphore(value: 0)
                let done = DispatchGroup()
                for side in 0..<2 {
                    done.enter()
                    Thread.detachNewThread {
                        start.wait()
                        if side == 0 {
                            taken.value = Result { () throws(CredentialVaultError) -> Data? in try store.take(key) }
                        } else {
                            saved.value = Result { () throws(CredentialVaultError) in try store.save(new, for: key) }
                        }
                        done.leave()
                    }
                }
                start.signal()
                start.signal()
                done.wait()
                try saved.value?.get()
                let got = try taken.value?.get()
                let left = try store.take(key)
                let linearizable = (got == new && left == nil) || (got == old && left == new)
                #expect(linearizable, "round \(round): take got \(text(got)), then \(text(left)) was left")
            }
        }
    }

    /// Two `secret-service-probe` processes take the key over and over (with two loads between
    /// takes) while this process saves new values, each followed by two loads. Only the probes take, so a load that finds
    /// nothing after `save(v)` means a take removed `v`, and a take that removes a value returns
    /// it: `v` must be in a probe's output. A take that read the previous value and then deleted
    /// the item `save(v)` had just replaced in place would break this.
    @Test func takesInOtherProcessesNeverLoseASave() async throws {
        try await offThePool {
            let service = "cvtest-race-\(UUID().uuidString.prefix(8))"
            let store = TestEnvironment.unscopedStore()
            defer { _ = try? store.deleteAll(service: service) }
            let key = CredentialKey(service: service, account: "verifier")
            // Loads between the takes (which take no lock) leave the saver room to run.
            let steps = (0..<100).flatMap { _ in ["take:\(service):verifier", "load:\(service):verifier", "load:\(service):verifier"] }
            let probes = Shared<[Result<[ProbeStep], any Error>]>([])
            let running = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: running) {
                    let result = Result { try runProbe(busMode: nil, timeoutMilliseconds: TestEnvironment.timeoutMilliseconds, steps) }
                    probes.update { $0.append(result) }
                }
            }
            var vanished: [String] = []
            var saves = 0
            while running.wait(timeout: .now()) == .timedOut {
                let value = "value \(saves)"
                saves += 1
                try store.save(Data(value.utf8), for: key)
                for _ in 0..<2 where try store.load(key) == nil {
                    vanished.append(value)
                    break
                }
            }
            var taken = try store.take(key).map { [String(decoding: $0, as: UTF8.self)] } ?? []
            for result in probes.value {
                for step in try result.get() where step.step.hasPrefix("take:") {
                    if step.outcome.hasPrefix("value:") {
                        taken.append(String(decoding: hexBytes(step.outcome.dropFirst("value:".count)), as: UTF8.self))
                    } else {
                        #expect(step.outcome == "nil", "\(step)")
                    }
                }
            }
            #expect(saves > 10 && taken.count > 10, "the race did not happen: \(saves) saves, \(taken.count) takes")
            #expect(Set(taken).count == taken.count, "a value was taken twice: \(taken)")
            for value in vanished {
                #expect(taken.contains(value), "\(value) was saved, then gone without being taken")
            }
        }
    }

    /// A lock held by someone else (another descriptor in this process, then another process)
    /// makes `save` and `take` of that key throw `busy` at a 400 ms deadline while it is still
    /// held (the lock is awaited before any D-Bus call, so the deadline is the lock's); keys of
    /// other lock files are not held up, and the key works again once it is released. The other
    /// calls have the tests' generous timeout.
    @Test func aHeldLockGivesBusyAtTheDeadline() async throws {
        try await offThePool {
            let fixture = IsolatedSecretServiceStore()
            let deadline = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: .milliseconds(400), serviceNamePrefix: fixture.prefix))
            let key = KeyItems.key(service: "busy", prefix: fixture.prefix, inStripe: KeyItems.heldUntilBusy)
            // Outside every stripe a test of this process holds: never busy because of a parallel test.
            let other = KeyItems.key(service: "busy", prefix: fixture.prefix, outside: KeyItems.heldStripes)
            try fixture.store.save(Data("before".utf8), for: key)
            let path = try KeyItems.lockPath(key, prefix: fixture.prefix)

            func expectBusy(_ what: String, stillHeld: () -> Bool) throws {
                for operation in ["save", "take"] {
                    #expect(throws: CredentialVaultError.busy, "\(what): \(operation)") {
                        if operation == "save" { try deadline.save(Data("during".utf8), for: key) } else { _ = try deadline.take(key) }
                    }
                    #expect(stillHeld(), "\(what): busy came from the deadline, not from the lock's release")
                }
                #expect(try fixture.store.load(key) == Data("before".utf8), "\(what)")
                try fixture.store.save(Data("unrelated".utf8), for: other)
            }

            let held = try HeldLock(path)
            try expectBusy("held in this process") { held.isHeld }
            held.release()
            #expect(try fixture.store.take(key) == Data("before".utf8))

            // Held by another process: the test helper's raw flock on `<path minus .lock>.lock`.
            let helper = TestEnvironment.probe.deletingLastPathComponent().appendingPathComponent("credvault-testhelper")
            guard FileManager.default.isExecutableFile(atPath: helper.path) else { return }
            try fixture.store.save(Data("before".utf8), for: key)
            let holder = Process()
            holder.executableURL = helper
            holder.arguments = ["hold-lock", String(path.dropLast(".lock".count)), "600"]
            let output = Pipe()
            holder.standardOutput = output
            try holder.run()
            // SIGKILL: a child of a test thread may inherit a mask that blocks SIGTERM.
            defer {
                kill(holder.processIdentifier, SIGKILL)
                holder.waitUntilExit()
            }
            try #require(LineReader(output).next() == "locked", "the helper took the lock")
            try expectBusy("held by another process") { holder.isRunning }
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
            #expect(try fixture.store.take(key) == Data("before".utf8))
        }
    }

    /// The lock files live in `$XDG_RUNTIME_DIR/credential-vault` (0700), are 0600, and their
    /// names say nothing about the key. The stripe function is a cross-process protocol: fixed.
    @Test func lockFilesArePrivateAndNameNoKey() async throws {
        try await offThePool {
            let fixture = IsolatedSecretServiceStore()
            let key = CredentialKey(service: "api.example.com", account: "alice")
            try fixture.store.save(Data("v".utf8), for: key)
            let path = try KeyItems.lockPath(key, prefix: fixture.prefix)
            let url = URL(fileURLWithPath: path)
            let runtime = try #require(ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"])
            #expect(url.deletingLastPathComponent().path == runtime + "/credential-vault")
            #expect(url.lastPathComponent.wholeMatch(of: /secret-service-[0-9]{2}\.lock/) != nil, "\(url.lastPathComponent)")
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(stat(url.deletingLastPathComponent().path, &info) == 0 && info.st_mode & 0o777 == 0o700)
            #expect(KeyItems.stripe(CredentialKey(service: "a", account: "b"), prefix: "") == 50)
            #expect(KeyItems.stripe(key, prefix: "") == 12)
        }
    }

    /// A `credential-vault` lock directory that others may write to is refused (an attacker
    /// could swap the lock files), with `permissionDenied`; without `XDG_RUNTIME_DIR` the lock
    /// goes to `/run/user/<uid>` or the cache directory.
    @Test func unsafeLockDirectoryIsRefusedAndFallbacksWork() async throws {
        try await offThePool {
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("cv-lockdir-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: home.appendingPathComponent("credential-vault"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: home) }
            chmod(home.appendingPathComponent("credential-vault").path, 0o777)
            let service = "cvtest-lockdir-\(UUID().uuidString.prefix(8))"
            defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: service) }
            let refused = try runProbe(
                busMode: nil, timeoutMilliseconds: TestEnvironment.timeoutMilliseconds, ["save:\(service):a", "take:\(service):a"],
                environment: ["XDG_RUNTIME_DIR": home.path])
            #expect(refused.map(\.outcome) == ["error:permissionDenied", "error:permissionDenied"], "\(refused)")

            let cache = home.appendingPathComponent("cache")
            let fallback = try runProbe(
                busMode: nil, timeoutMilliseconds: TestEnvironment.timeoutMilliseconds, ["save:\(service):a", "take:\(service):a"],
                environment: ["XDG_RUNTIME_DIR": nil, "XDG_CACHE_HOME": cache.path])
            #expect(fallback.map(\.outcome).first == "ok", "\(fallback)")
            let systemd = "/run/user/\(geteuid())"
            var info = stat()
            let expected = stat(systemd, &info) == 0 && info.st_uid == geteuid() ? systemd : cache.path
            #expect(FileManager.default.fileExists(atPath: expected + "/credential-vault"), "\(expected)")
        }
    }
}

/// A value shared between the racing threads of a test.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}

private func text(_ data: Data?) -> String { data.map { "\"\(String(decoding: $0, as: UTF8.self))\"" } ?? "nothing" }

private func hexBytes(_ hex: Substring) -> Data {
    var bytes = Data()
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
        if let byte = UInt8(hex[index..<next], radix: 16) { bytes.append(byte) }
        index = next
    }
    return bytes
}
