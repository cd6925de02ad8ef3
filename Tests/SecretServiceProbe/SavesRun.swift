import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTesting
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `async-saves:COUNT:MODE:KEYS` step (see AsyncSteps.swift): concurrent async saves beside
/// a heartbeat, reported as what happened.
enum SavesRun {
    /// The beats the heartbeat must make once every save has started: a blocked pool makes none.
    static let beats = 50

    private typealias Outcome = Result<Void, CredentialVaultError>

    static func run(_ parts: [String], store: SecretServiceStore) async -> (outcome: String, detail: String?) {
        guard parts.count == 4, let count = Int(parts[1]), count > 0, ["finish", "cancel"].contains(parts[2]),
            ["one", "distinct"].contains(parts[3])
        else {
            return ("usage:saves-arguments", nil)
        }
        let heartbeat = Heartbeat.start()
        let counts = SaveCounts(count)
        let (progress, results) = await withTaskGroup(of: Outcome.self) { group -> (String, [Outcome]) in
            for index in 0..<count {
                let key = CredentialKey(service: "probe-async", account: parts[3] == "one" ? "one" : "key-\(index)")
                group.addTask {
                    counts.started()
                    let outcome = await save(key, store: store)
                    counts.finished()
                    return outcome
                }
            }
            await counts.allStarted()
            // The ceiling only keeps a blocked pool from hanging the probe past the test's own.
            let beat = await heartbeat.beats(beats, ceiling: .seconds(30))
            let unfinished = count - counts.finishedCount
            let progress = "started=\(count),beat=\(beat ? "yes" : "no"),unfinished=\(unfinished)"
            print("# waiting \(progress)")
            fflush(nil)  // the progress line now, not when the buffer fills
            if parts[2] == "cancel" { group.cancelAll() }
            var results: [Outcome] = []
            for await result in group { results.append(result) }
            return (progress, results)
        }
        await heartbeat.stop()
        var ok = 0
        var cancelled = 0
        var other: [CredentialVaultError] = []
        for result in results {
            switch result {
            case .success: ok += 1
            case .failure(.cancelled): cancelled += 1
            case .failure(let error): other.append(error)
            }
        }
        let outcome = progress + ",ok=\(ok),cancelled=\(cancelled),other=\(other.count)"
        return (outcome, other.first.map { "\($0.kind): \($0.description)" })
    }

    private static func save(_ key: CredentialKey, store: SecretServiceStore) async -> Outcome {
        do throws(CredentialVaultError) {
            try await store.save(AsyncSteps.value, for: key, options: .default)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}

/// How many saves have started and ended; `allStarted()` returns once every one has started
/// (no polling).
private final class SaveCounts: Sendable {
    private struct State {
        var started = 0
        var finished = 0
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let total: Int
    private let state = Mutex(State())

    init(_ total: Int) { self.total = total }

    var finishedCount: Int { state.withLock { $0.finished } }

    func finished() { state.withLock { $0.finished += 1 } }

    func started() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.started += 1
            guard state.started >= total else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func allStarted() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.started >= total { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
