import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTestSupport
import Foundation
import Testing

/// A `save` or `take` waiting for its key's lock file (held by another descriptor of this
/// process, or by another process) answers `cancelled` when its task is cancelled, while the
/// lock is still held, instead of waiting for its deadline; nothing was written. Saves waiting
/// for the lock in another process leave that process's pool running. Every property is an
/// outcome (the lock is released only after the waiters answered or were seen waiting); the
/// latencies are credvault-bench's. Serialized: the tests hold the same lock stripes.
@Suite(.ownThread, .privateKeyring, .serialized)
struct AsyncKeyLockTests {
    /// A deadline no wait reaches within the ceilings: only cancellation or the lock's release
    /// can end it.
    static let unreachableDeadline = Duration.seconds(3600)

    @Test(arguments: ["save", "take"])
    func aCancelledOperationWaitingForAHeldKeyLockEndsWhileTheLockIsStillHeld(_ operation: String) async throws {
        let fixture = IsolatedSecretServiceStore(timeout: Self.unreachableDeadline)
        let store = fixture.store
        let key = KeyItems.key(service: "held", prefix: fixture.prefix, inStripe: KeyItems.heldInProcess)
        try await store.save(Data("before".utf8), for: key)
        let path = try KeyItems.lockPath(key, prefix: fixture.prefix)
        let held = try HeldLock(path)
        defer { held.release() }
        let attempts = try LockFileOpens(path)
        defer { attempts.stop() }

        // The answer, and whether the lock was still held then; released at once after, so that
        // a parallel test's key in the same stripe never waits for this test to be scheduled.
        let waiting = Task { () async -> (Result<Data?, CredentialVaultError>, heldThen: Bool) in
            defer { held.release() }
            do throws(CredentialVaultError) {
                if operation == "take" { return (.success(try await store.take(key)), held.isHeld) }
                try await store.save(Data("during".utf8), for: key)
                return (.success(nil), held.isHeld)
            } catch {
                return (.failure(error), held.isHeld)
            }
        }
        // Every attempt opens the lock file: two opens since it was taken, and it is waiting.
        #expect(await attempts.opens.reached(2), "the \(operation) tried the held lock")
        waiting.cancel()
        let (result, heldThen) = try await withCeiling(.seconds(120), "a cancelled \(operation) waiting for a held lock") { await waiting.value }
        #expect(heldThen, "the lock was held until the \(operation) answered")
        guard case .failure(.cancelled) = result else {
            Issue.record("\(operation): \(result), expected cancelled")
            return
        }
        #expect(try await store.load(key) == Data("before".utf8), "the cancelled save wrote nothing, the take took nothing")
    }

    /// This process holds the key's lock file while `secret-service-probe` runs 64 async saves
    /// of that key beside its heartbeat: they all start and wait, the heartbeat beats, and only
    /// then is the lock released; then every save succeeds.
    @Test func sixtyFourSavesWaitingForALockAnotherProcessHoldsKeepThePoolFree() async throws {
        try await offThePool {
            let key = CredentialKey(service: "probe-async", account: "one")
            defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: "probe-async") }
            let held = try HeldLock(try KeyItems.lockPath(key, prefix: ""))
            defer { held.release() }
            let probe = try RunningProbe(timeoutMilliseconds: Self.milliseconds(Self.unreachableDeadline), ["async-saves:64:finish:one"])
            let progress = try probe.waitForProgress("waiting")
            #expect(progress == "waiting started=64,beat=yes,unfinished=64", "every save waited while the probe's heartbeat beat")
            held.release()
            let saves = try #require(SavesOutcome(try probe.finish()[0]))
            #expect(saves.ok == 64, "every save landed once the lock was released: \(saves)")
        }
    }

    /// The same saves cancelled while the lock is held: all 64 answer `cancelled` before it is
    /// released.
    @Test func sixtyFourCancelledSavesInAnotherProcessEndWhileTheLockIsStillHeld() async throws {
        try await offThePool {
            let key = CredentialKey(service: "probe-async", account: "one")
            defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: "probe-async") }
            let held = try HeldLock(try KeyItems.lockPath(key, prefix: ""))
            defer { held.release() }
            let steps = try runProbe(busMode: nil, timeoutMilliseconds: Self.milliseconds(Self.unreachableDeadline), ["async-saves:64:cancel:one"])
            #expect(held.isHeld)
            let saves = try #require(SavesOutcome(steps[0]))
            #expect(saves.started == 64 && saves.beat && saves.unfinished == 64, "every save waited while the heartbeat beat: \(saves)")
            #expect(saves.cancelled == 64, "every save answered cancelled while the lock was held: \(saves)")
            held.release()
            #expect(try TestEnvironment.unscopedStore().load(key) == nil, "a cancelled save wrote nothing")
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int { Int(duration.components.seconds) * 1000 }
}
