// secret-service-probe: runs SecretServiceStore operations in a process of its own, for the tests
// that need another D-Bus session bus than the test process's (a locked keyring, a bus without a
// Secret Service, no bus at all, a daemon stopped with SIGSTOP).
//
// Usage: secret-service-probe [--timeout-ms N] [--interactive] STEP...
// (--interactive: SecretServiceConfiguration.allowsInteraction; --timeout-ms sets both deadlines)
// Steps: status | unlock | list | sigstop | sigcont | lock-default | set-timeout:MS
//        save:SERVICE:ACCOUNT | save-ephemeral:SERVICE:ACCOUNT | load:SERVICE:ACCOUNT |
//        take:SERVICE:ACCOUNT | delete:SERVICE:ACCOUNT
//        async-status | async-unlock | async-list | async-save:SERVICE:ACCOUNT |
//        async-load:SERVICE:ACCOUNT | async-take:SERVICE:ACCOUNT | async-delete:SERVICE:ACCOUNT
//        (the same through the async API) |
//        async-saves:COUNT:finish|cancel:one|distinct (concurrent saves beside a heartbeat: SavesRun.swift)
//        portal-backend:APP_ID (the Secret portal's backend called directly: PortalSteps.swift)
// sigstop/sigcont signal the daemon whose PID is in CREDVAULT_TEST_KEYRING_PID (or, under
// scripts/services/providers/with-provider.sh, WITH_PROVIDER_PID); lock-default
// locks the login collection with `dbus-send` (Service.Lock, which never prompts);
// set-timeout:MS makes the next steps use a store with that timeout (a short deadline for the
// steps on a stopped daemon, a generous one before and after, which a loaded machine meets).
// Prints one line per step: STEP <TAB> OUTCOME <TAB> MILLISECONDS [<TAB> ERROR MESSAGE], where
// OUTCOME is `ok`, `nil`, `value:<hex>`, `keys:<n>`, `unlocked`, `locked`, or `error:<case>` (a
// CredentialVaultError case, whose description follows in a fourth field). MILLISECONDS is for
// people reading a failure; tests assert outcomes only. Lines starting with `#` are progress.
import CredentialVault
import CredentialVaultSecretService
import Foundation

#if canImport(Glibc)
import Glibc
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
var configuration = SecretServiceConfiguration()
if arguments.first == "--timeout-ms", arguments.count > 1, let milliseconds = Int(arguments[1]) {
    configuration.timeout = .milliseconds(milliseconds)
    configuration.interactiveUnlockTimeout = .milliseconds(milliseconds)
    arguments.removeFirst(2)
}
if arguments.first == "--interactive" {
    configuration.allowsInteraction = true
    arguments.removeFirst()
}
var store = SecretServiceStore(configuration: configuration)
let probeValue = Data("probe-secret".utf8)

func run(_ step: String, store: SecretServiceStore) -> (outcome: String, detail: String?) {
    let parts = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    let key = parts.count == 3 ? CredentialKey(service: parts[1], account: parts[2]) : nil
    do throws(CredentialVaultError) {
        return (try perform(parts, key, store: store), nil)
    } catch {
        return ("error:\(error.kind)", error.description)
    }
}

func perform(_ parts: [String], _ key: CredentialKey?, store: SecretServiceStore) throws(CredentialVaultError) -> String {
    switch (parts[0], key) {
    case ("status", _): return try store.status().isLocked ? "locked" : "unlocked"
    case ("unlock", _): try store.unlockInteractively(); return "unlocked"
    case ("list", _): return "keys:\(try store.listKeys().count)"
    case ("save", let key?): try store.save(probeValue, for: key, options: .default); return "ok"
    case ("save-ephemeral", let key?): try store.save(probeValue, for: key, options: .ephemeral()); return "ok"
    case ("load", let key?): return try store.load(key).map { "value:" + $0.map { String(format: "%02x", $0) }.joined() } ?? "nil"
    case ("take", let key?): return try store.take(key).map { "value:" + $0.map { String(format: "%02x", $0) }.joined() } ?? "nil"
    case ("delete", let key?): return try store.delete(key) ? "ok" : "nil"
    case ("lock-default", _):
        let lock = Process()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        lock.arguments = [
            "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
        ]
        lock.standardOutput = FileHandle.nullDevice
        do { try lock.run() } catch { return "usage:dbus-send-failed" }
        lock.waitUntilExit()
        return lock.terminationStatus == 0 ? "ok" : "usage:dbus-send-failed"
    case ("sigstop", _), ("sigcont", _):
        let environment = ProcessInfo.processInfo.environment
        guard let pid = (environment["CREDVAULT_TEST_KEYRING_PID"] ?? environment["WITH_PROVIDER_PID"]).flatMap({ pid_t($0) }) else {
            return "usage:no-CREDVAULT_TEST_KEYRING_PID"
        }
        return kill(pid, parts[0] == "sigstop" ? SIGSTOP : SIGCONT) == 0 ? "ok" : "usage:kill-failed"
    case ("portal-backend", _): return try PortalSteps.run(parts, timeout: store.configuration.timeout)
    case ("resolve", _), ("resolve-async", _), ("open", _), ("open-async", _):
        return try ResolverSteps.run(parts, configuration: store.configuration)
    default: return "usage:unknown-step"
    }
}

for step in arguments {
    if step.hasPrefix("set-timeout:"), let milliseconds = Int(step.dropFirst("set-timeout:".count)) {
        configuration.timeout = .milliseconds(milliseconds)
        configuration.interactiveUnlockTimeout = .milliseconds(milliseconds)
        store = SecretServiceStore(configuration: configuration)
        print("\(step)\tok\t0")
        continue
    }
    let start = ContinuousClock.now
    let (outcome, detail) = AsyncSteps.handles(step) ? await AsyncSteps.run(step, store: store) : run(step, store: store)
    let elapsed = ContinuousClock.now - start
    let (seconds, attoseconds) = elapsed.components
    let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    print("\(step)\t\(outcome)\t\(milliseconds)" + (detail.map { "\t" + $0.replacingOccurrences(of: "\n", with: " ") } ?? ""))
}
