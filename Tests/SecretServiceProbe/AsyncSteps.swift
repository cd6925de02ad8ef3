import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTesting
import Foundation

/// The probe's steps through the async API (see main.swift for the step syntax).
///
/// `async-saves:COUNT:MODE:KEYS` starts COUNT concurrent async saves (KEYS `distinct`: one key
/// each, `one`: all the same key) with a `Heartbeat` beside them on the cooperative pool. Once
/// every save has started and the heartbeat has beaten `SavesRun.beats` more times, it prints a
/// progress line `# waiting started=N,beat=yes|no,unfinished=N` (how many saves had not ended
/// then), flushed, so that a test reading the probe's output knows the saves are waiting; then
/// MODE `finish` waits for them, MODE `cancel` cancels them all and waits for their answers.
/// Its outcome is `started=N,beat=yes|no,unfinished=N,ok=N,cancelled=N,other=N`: outcomes, never
/// times (the latencies are credvault-bench's).
enum AsyncSteps {
    /// Whether `step` is one of these.
    static func handles(_ step: String) -> Bool { step.hasPrefix("async-") }

    /// Runs `step` against `store`.
    static func run(_ step: String, store: SecretServiceStore) async -> (outcome: String, detail: String?) {
        let parts = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if parts[0] == "async-saves" { return await SavesRun.run(parts, store: store) }
        let key = parts.count == 3 ? CredentialKey(service: parts[1], account: parts[2]) : nil
        do throws(CredentialVaultError) {
            return (try await single(parts[0], key, store: store), nil)
        } catch {
            return ("error:\(error.kind)", error.description)
        }
    }

    static let value = Data("probe-secret".utf8)

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
}
