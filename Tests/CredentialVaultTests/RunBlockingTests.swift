import CredentialVaultCLI
import Foundation
import Testing

/// `runBlocking` lets a synchronous command run async work; the command may return (and the
/// process exit) right after it. What the work captured must be released by then, or it stays
/// in the task's memory at exit (LeakSanitizer reported a migration's stores as lost).
@Suite struct RunBlockingTests {
    private final class Captured: Sendable {}

    @Test func theWorkAndWhatItCapturedAreReleasedWhenRunBlockingReturns() async throws {
        // The race is between the woken caller and the task's teardown: many rounds make it show.
        let heldAfterReturn = try await onThreadOfItsOwn { () throws -> Int? in
            for round in 0..<300 {
                let captured = Captured()
                weak let watched = captured
                var work: (@Sendable () async throws -> Int)? = { [captured] in
                    withExtendedLifetime(captured) {}
                    return round
                }
                _ = consume captured
                let value = try runBlocking(work!)
                work = nil
                guard value == round else { throw Mismatch() }
                if watched != nil { return round }
            }
            return nil
        }
        #expect(heldAfterReturn == nil, "the task still held the work after runBlocking returned")
    }

    @Test func anErrorOfTheWorkIsThrownToTheCaller() async {
        await #expect(throws: Mismatch.self) {
            try await onThreadOfItsOwn { try runBlocking { () async throws -> Int in throw Mismatch() } }
        }
    }

    private struct Mismatch: Error {}

    /// `runBlocking` waits on its thread, as the CLI's main thread does: never on one of the
    /// cooperative threads its own task needs (two tests doing so deadlock a 2-core machine).
    private func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}
