import CredentialVault
import Foundation

/// `disable-core-dumps`: prints "before BOOL", calls `ProcessHardening.disableCoreDumps()`,
/// prints "after BOOL" (`coreDumpsDisabled` each time), then waits for stdin to close, so that
/// the test can look at the process from outside.
func disableCoreDumps() throws {
    emit("before \(ProcessHardening.coreDumpsDisabled)")
    try ProcessHardening.disableCoreDumps()
    emit("after \(ProcessHardening.coreDumpsDisabled)")
    _ = FileHandle.standardInput.readDataToEndOfFile()
}
