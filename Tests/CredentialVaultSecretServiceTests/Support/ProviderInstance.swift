import CredentialVaultTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Secret Service provider of a test's own, headless on a private bus
/// (`scripts/services/providers/with-provider.sh`), for the tests that lock, stop or kill it.
/// It lives until `stop()` (or deinit): with-provider.sh's command waits on this object's pipe,
/// so the provider also goes when the test process does.
final class ProviderInstance: @unchecked Sendable {
    // @unchecked: the process and pipe are set once in init; stop() is idempotent.

    /// What with-provider.sh exported (`WITH_PROVIDER_*`, `DBUS_SESSION_BUS_ADDRESS`).
    let variables: [String: String]
    private let process: Process
    private let input: Pipe
    /// Kept open: with-provider.sh still writes to it while it stops (a closed pipe would kill it).
    private let output: Pipe

    struct StartFailed: Error, CustomStringConvertible {
        var output: String
        var description: String { "with-provider.sh did not start the provider:\n\(output)" }
    }

    /// Starts `provider`; `options` are with-provider.sh's environment options
    /// (`WITH_PROVIDER_KWALLET_STATE`, `WITH_PROVIDER_KEEPASSXC_DEFAULTS`).
    init(_ provider: Provider, options: [String: String] = [:]) throws {
        let script = TestEnvironment.packageRoot.appendingPathComponent("scripts/services/providers/with-provider.sh")
        process = Process()
        process.executableURL = script
        // The command inside: prints its environment, then waits until this side closes the pipe.
        process.arguments = [
            provider.rawValue, "sh", "-c",
            "env | grep -E '^(WITH_PROVIDER_|DBUS_SESSION_BUS_ADDRESS=|XDG_RUNTIME_DIR=)'; echo READY; exec cat >/dev/null",
        ]
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in options { environment[name] = value }
        process.environment = environment
        input = Pipe()
        output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // with-provider.sh bounds each of its start-up steps (20 s); it prints READY or exits.
        var text = ""
        let reader = output.fileHandleForReading
        while !text.contains("READY\n") {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard text.contains("READY\n") else {
            process.waitUntilExit()
            throw StartFailed(output: text)
        }
        var variables: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.variables = variables
        // Drained from now on, so that the script never blocks on a full pipe.
        reader.readabilityHandler = { handle in _ = handle.availableData }
    }

    /// The private bus's address.
    var bus: String { variables["WITH_PROVIDER_BUS"] ?? variables["DBUS_SESSION_BUS_ADDRESS"] ?? "" }

    /// The provider's process.
    var pid: pid_t { pid_t(variables["WITH_PROVIDER_PID"] ?? "") ?? 0 }

    /// The environment of a child process on this bus (with what the lock and unlock scripts read).
    var childEnvironment: [String: String?] {
        var environment: [String: String?] = ["DBUS_SESSION_BUS_ADDRESS": bus]
        for (name, value) in variables where name.hasPrefix("WITH_PROVIDER_") { environment[name] = value }
        return environment
    }

    /// Locks the default collection the way the provider is locked from outside
    /// (`provider-lock.sh`), returning once it reports `Locked`.
    func lock() throws { try runHelper("WITH_PROVIDER_LOCK") }

    /// Unlocks it again without a dialog (`provider-unlock.sh`).
    func unlock() throws { try runHelper("WITH_PROVIDER_UNLOCK") }

    private func runHelper(_ variable: String) throws {
        // The helpers find gnome-keyring's control socket in the instance's runtime directory.
        var environment = childEnvironment
        environment["XDG_RUNTIME_DIR"] = variables["XDG_RUNTIME_DIR"]
        let result = try CLIChild.run(variables[variable] ?? "/bin/false", [], inheriting: environment)
        guard result.status == 0 else { throw StartFailed(output: "\(variable) failed: \(result.stderr)") }
    }

    /// Sends `signal` to the provider's process.
    func send(_ signal: Int32) {
        if pid > 0 { kill(pid, signal) }
    }

    /// Stops the provider and its bus (with-provider.sh's command ends when the pipe closes).
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
    }

    deinit { stop() }
}
