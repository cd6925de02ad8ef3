import CredentialVaultTestSupport
import Foundation
import Synchronization

/// Runs the blocking `body` (a TPM call) on a thread of its own and waits for it at most
/// `ceiling`: a "never hangs" check for synchronous calls, whose ceiling is many times the
/// deadline under test and says only that the call ended at all. Past it, `StillRunning` is
/// thrown (the thread is left to finish on its own).
func withThreadCeiling<T: Sendable>(
    _ what: String, ceiling: Duration = .seconds(120), _ body: @escaping @Sendable () throws -> T
) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<T, any Error>?>(nil)
    Thread.detachNewThread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    guard done.wait(timeout: .now() + ceiling.seconds) == .success else { throw StillRunning(what: what, ceiling: ceiling) }
    return try result.withLock { $0! }.get()
}

/// A call still running at its ceiling: it hangs.
struct StillRunning: Error, CustomStringConvertible {
    var what: String
    var ceiling: Duration
    var description: String { "\(what) was still running after \(ceiling): it hangs" }
}
