import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How long `credvault` waits for another process's lock on a sealed-file vault: the
/// library's default (`SealedFileConfiguration.lockTimeout`, 10 s), or
/// `$CREDVAULT_TEST_LOCK_WAIT_SECONDS` seconds (1 to 3600). The variable is for the project's
/// own tests only: a test that inspects a CLI process while it waits for a lock (its memory,
/// its state) sets a wait far longer than the inspection can take on a loaded machine, so the
/// outcome never depends on how fast the machine is. Users have no reason to set it. A value
/// that is not such a number is a usage error, never silently the default.
enum TestLockWait {
    static let variable = "CREDVAULT_TEST_LOCK_WAIT_SECONDS"

    /// The wait `environment` asks for; `nil` when it asks for none (the library's default).
    static func current(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Duration? {
        guard let text = environment[variable] else { return nil }
        guard let seconds = Int(text), (1...3600).contains(seconds) else {
            throw UsageError("$\(variable) is a number of seconds from 1 to 3600")
        }
        return .seconds(seconds)
    }
}
