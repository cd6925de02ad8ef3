import CredentialVault
import CredentialVaultTesting
import CredentialVaultSecretService
import Foundation

/// The probe's steps through the async API (see main.swift for the step syntax).
///
/// `async-saves:COUNT:CANCEL_MS:KEYS` starts COUNT concurrent async saves (KEYS `distinct`: one
/// key each, `one`: all the same key) with a `Heartbeat` running beside them on the
/// cooperative pool; with CANCEL_MS > 0 it cancels them all after that long. Its outcome is
/// `lagus=L,baselineus=B,cancelus=C,ok=N,cancelled=N,other=N,beats=N`: the heartbeat's worst
/// lateness from the first save to the last result (L, microseconds), its worst lateness in
/// 200 ms before the saves with nothing else running (B: the machine's own noise), the time
/// from the cancellation to the last result (C, -1 without one), and how the saves ended.
/// `sync-saves:...` is the same with the synchronous API called from the tasks (the old way):
/// a diagnostic to compare with, never what an app should do.
enum AsyncSteps {
    /// Whether `step` is one of these.
    static func handles(_ step: String) -> Bool {
        step.hasPrefix("async-") || step.hasPrefix("sync-saves:")
    }

    /// Runs `step` against `store`.
    static func run(_ step: String, store: SecretServiceStore) async -> (outcome: String, detail: String?) {
        let parts = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if parts[0] == "async-saves" || parts[0] == "sync-saves" {
            return await saves(parts, store: store, blocking: parts[0] == "sync-saves")
        }
        let key = parts.count == 3 ? CredentialKey(service: parts[1], account: parts[2]) : nil
        do throws(CredentialVaultError) {
            return (try await single(parts[0], key, store: store), nil)
        } catch {
            return ("error:\(caseName(error))", error.description)
        }
    }

    private static let value = Data("probe-secret".utf8)

    /// One operation through the async API, answered like its synchronous step.
    private static func single(_ name: String, _ key: CredentialKey?, store: SecretServiceStore) async throws(CredentialVaultError) -> String {
        switch (name, key) {
        case ("async-status", _): return try await store.status().isLocked ? "locked" : "unlocked"
        case ("async-unlock", _):
            try await store.unlockInteractively()
            return "unlocked"
        case ("async-list", _): return "keys:\(try await store.listKeys().count)"
        case ("async-save", let key?):
            try await store.save(value, for: key, options: .default)
            return "ok"
        case ("async-load", let key?): return try await store.load(key).map(hex) ?? "nil"
        case ("async-take", let key?): return try await store.take(key).map(hex) ?? "nil"
        case ("async-delete", let key?): return try await store.delete(key) ? "ok" : "nil"
        default: return "usage:unknown-step"
        }
    }

    private static func hex(_ data: Data) -> String { "value:" + data.map { String(format: "%02x", $0) }.joined() }

    private typealias Outcome = Result<Void, CredentialVaultError>

    private static func saves(_ parts: [String], store: SecretServiceStore, blocking: Bool) async -> (outcome: String, detail: String?) {
        guard parts.count == 4, let count = Int(parts[1]), let cancelAfter = Int(parts[2]), ["one", "distinct"].contains(parts[3]) else {
            return ("usage:saves-arguments", nil)
        }
        let heartbeat = Heartbeat.start()
        try? await Task.sleep(for: .milliseconds(200))
        let baseline = heartbeat.longestGap
        heartbeat.resetLongestGap()
        let (results, cancelLatency) = await withTaskGroup(of: Outcome.self) { group -> ([Outcome], Duration?) in
            for index in 0..<count {
                let key = CredentialKey(service: "probe-async", account: parts[3] == "one" ? "one" : "key-\(index)")
                group.addTask { await save(key, store: store, blocking: blocking) }
            }
            var results: [Outcome] = []
            var latency: Duration?
            if cancelAfter > 0 {
                try? await Task.sleep(for: .milliseconds(cancelAfter))
                let start = ContinuousClock.now
                group.cancelAll()
                for await result in group { results.append(result) }
                latency = ContinuousClock.now - start
            } else {
                for await result in group { results.append(result) }
            }
            return (results, latency)
        }
        let lag = heartbeat.longestGap
        let beats = heartbeat.count
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
        let fields = [
            "lagus=\(microseconds(lag))", "baselineus=\(microseconds(baseline))",
            "cancelus=\(cancelLatency.map(microseconds) ?? -1)", "ok=\(ok)", "cancelled=\(cancelled)",
            "other=\(other.count)", "beats=\(beats)",
        ]
        return (fields.joined(separator: ","), other.first.map { "\(caseName($0)): \($0.description)" })
    }

    private static func save(_ key: CredentialKey, store: SecretServiceStore, blocking: Bool) async -> Outcome {
        do throws(CredentialVaultError) {
            if blocking {
                try store.synchronous.save(value, for: key, options: .default)
            } else {
                try await store.save(value, for: key, options: .default)
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
