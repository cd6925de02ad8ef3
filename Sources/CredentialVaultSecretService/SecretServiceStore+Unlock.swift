import CLibSecret
import CredentialVault
import Dispatch
import Foundation
import Synchronization

extension SecretServiceStore {
    /// Asks the Secret Service to unlock the default collection, which normally shows a
    /// password prompt on the user's display. This is the only call of this backend that may
    /// prompt; call it only when a person is there to answer.
    ///
    /// Returns at once when the collection is already unlocked. Throws `locked` when the
    /// prompt was dismissed or could not be shown (no display), `timedOut` after
    /// `configuration.interactiveUnlockTimeout`, `notAvailable` when there is no service or no
    /// default collection.
    ///
    /// The prompt runs on a helper thread: libsecret does not always return from a cancelled
    /// unlock while its prompt is open, and this call must return at its deadline regardless.
    /// Such a thread is left to finish (or to wait for the prompt) on its own.
    ///
    /// Called through the async `unlockInteractively()`, cancelling the task dismisses the
    /// prompt (its cancellable is cancelled) and returns `cancelled` at once, without waiting
    /// for the helper thread; the collection may still end up unlocked if the person answered
    /// the prompt just then.
    public func unlockInteractively() throws(CredentialVaultError) {
        let target = try perform { (call) throws(CredentialVaultError) -> UnlockTarget? in
            guard let main = try call.collection(.default) else {
                throw .notAvailable("the Secret Service has no default collection (keyring) to unlock")
            }
            return main.isLocked ? UnlockTarget(service: call.service, collection: main) : nil
        }
        guard let target else { return }

        let timeout = configuration.interactiveUnlockTimeout
        let deadline = Deadline(timeout)
        let outcome = Mutex<Result<Bool, GLibError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = target.unlock(cancellable: deadline.cancellable)
            outcome.withLock { $0 = result }
            deadline.finish()
            done.signal()
        }
        thread.start()
        // On a store thread (the async API): the task's cancellation cancels the prompt and
        // wakes this wait (an extra signal is harmless: the semaphore is waited on once).
        CancellationFlag.current?.onCancel {
            deadline.cancel()
            done.signal()
        }
        // A little grace after the deadline for the cancelled call to come back on its own.
        let (seconds, attoseconds) = deadline.duration.components  // bounded: no overflow in the sum below
        let grace = Double(seconds) + Double(attoseconds) / 1e18 + 1
        guard done.wait(timeout: .now() + grace) == .success, let result = outcome.withLock({ $0 }) else {
            throw deadline.wasCancelled ? .cancelled : .timedOut
        }
        switch result {
        case .failure(let error):
            throw deadline.settle(error.vaultError(deadlineExpired: deadline.hasExpired))
        case .success(let unlocked):
            if !unlocked { throw .locked }
        }
        // Confirm with a fresh look at the collection rather than trusting the prompt's answer.
        let stillLocked = try perform { (call) throws(CredentialVaultError) -> Bool in
            try call.collection(.default)?.isLocked ?? true
        }
        if stillLocked { throw .locked }
    }
}

/// What an interactive unlock works on, handed to its helper thread.
private final class UnlockTarget: @unchecked Sendable {
    // @unchecked: holds references to thread-safe GDBusProxy objects; used by one thread at a time.
    private let service: ServiceHandle
    private let collection: UnsafeMutablePointer<SecretCollection>

    init(service: ServiceHandle, collection: CollectionProxy) {
        self.service = service
        self.collection = collection.pointer
        g_object_ref(collection.pointer)
    }

    deinit { g_object_unref(collection) }

    /// Runs the unlock (with its prompt); `true` when the collection was unlocked.
    func unlock(cancellable: UnsafeMutablePointer<GCancellable>) -> Result<Bool, GLibError> {
        let objects = g_list_append(nil, UnsafeMutableRawPointer(collection))
        defer { g_list_free(objects) }
        var unlocked: UnsafeMutablePointer<GList>?
        do {
            let count = try withGError {
                secret_service_unlock_sync(service.pointer, objects, cancellable, &unlocked, $0)
            }
            g_list_free_full(unlocked, g_object_unref)
            return .success(count > 0)
        } catch {
            g_list_free_full(unlocked, g_object_unref)
            return .failure(error)
        }
    }
}
