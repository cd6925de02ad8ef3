import CLibSecret
import CredentialVault

/// What a provider's prompt was asked for, for the messages.
enum PromptPurpose {
    /// `Collection.CreateItem` (KeePassXC answers every one with a prompt).
    case store
    /// `Item.Delete` (KeePassXC confirms deletions by default).
    case delete
    /// `Service.Unlock` of a collection (its unlock dialog; none for an open KWallet wallet).
    case unlockCollection
    /// `Service.Unlock` of items whose collection is unlocked (KeePassXC's access confirmation).
    case confirmAccess

    var asking: String {
        switch self {
        case .store: "to store the item"
        case .delete: "to confirm deleting the item"
        case .unlockCollection: "to unlock the collection"
        case .confirmAccess: "to confirm this program's access to the item"
        }
    }
}

extension ServiceCall {
    /// Runs the prompt at `path` (the Secret Service's `Prompt.Prompt`, then its `Completed`
    /// signal) and returns the prompt's result (owned: `g_variant_unref` it), or `nil` when the
    /// provider (or the person) dismissed it.
    ///
    /// A prompt that completes without a person (KeePassXC's for a create, KWallet's unlock of
    /// an open wallet) completes within the operation's deadline. With
    /// `SecretServiceConfiguration.allowsInteraction` the wait lasts up to
    /// `interactiveUnlockTimeout` instead (a person may be answering a dialog), then `timedOut`.
    /// Without it, a prompt still pending at the deadline was waiting for a person: it is
    /// dismissed and `interactionRequired` thrown, saying what was asked and how to allow it.
    /// Cancelling the task dismisses it too (`cancelled`).
    func runPrompt(_ path: String, for purpose: PromptPurpose) throws(CredentialVaultError) -> OpaquePointer? {
        let outcome: PromptWait.Outcome
        if policy.allowsInteraction {
            outcome = deadline.waitingForPerson(policy.interactionTimeout) { awaitPrompt(path) }
        } else {
            outcome = awaitPrompt(path)
        }
        switch outcome {
        case .completed(let result): return result
        case .dismissed: return nil
        case .providerLeft: throw providerLeftDuringPrompt()
        case .failed(let error): throw fail(error)
        case .interrupted:
            let dismissal = dismissPrompt(path)
            if deadline.wasCancelled { throw .cancelled }
            if policy.allowsInteraction { throw .timedOut }
            // Only a provider that still answers was waiting for a person: one that does not
            // answer its Dismiss either is stopped or hung, one that left is gone, and neither
            // is helped by allowing interaction.
            switch dismissal {
            case .answered: throw .interactionRequired(interactionMessage(purpose))
            case .noAnswer: throw .timedOut
            case .failed(let error):
                if error.invalidatesConnection { throw providerLeftDuringPrompt() }
                throw .interactionRequired(interactionMessage(purpose))
            }
        }
    }

    /// What `interactionRequired` says: who asks what (with the provider's setting that asks,
    /// where it is known), and how to allow it.
    func interactionMessage(_ purpose: PromptPurpose) -> String {
        var text = "\(service.provider) asks a person \(purpose.asking)"
        if service.provider == .keePassXC {
            switch purpose {
            case .confirmAccess:
                text += " (its setting \"Confirm when passwords are retrieved by clients\" asks for each program that did not create the item)"
            case .delete: text += " (its setting \"Confirm when clients request entry deletion\")"
            case .store, .unlockCollection: break
            }
        }
        return text + "; allow interaction to answer it: credvault --interactive (or CREDVAULT_INTERACTIVE=1), "
            + "SecretServiceConfiguration.allowsInteraction in an application"
    }

    /// `Prompt.Prompt` and the wait for `Completed`, on a private main context of this thread.
    private func awaitPrompt(_ path: String) -> PromptWait.Outcome {
        let wait = PromptWait()
        let context = g_main_context_new()!
        g_main_context_push_thread_default(context)
        defer {
            // GDBus hands the subscription's and the watch's user data (the retains of `wait`)
            // back through this context after the unsubscribe: let it, before the context goes
            // (else `wait` leaked once per prompt).
            while g_main_context_iteration(context, 0) != 0 {}
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        // Subscribed before the prompt is started, so `Completed` cannot be missed; delivered to
        // this thread's context (the one pushed above).
        let retained = Unmanaged.passRetained(wait).toOpaque()
        let subscription = g_dbus_connection_signal_subscribe(
            service.bus, service.busName, "org.freedesktop.Secret.Prompt", "Completed", path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                guard let data, let parameters else { return }
                Unmanaged<PromptWait>.fromOpaque(data).takeUnretainedValue().complete(parameters)
            },
            retained, { data in if let data { Unmanaged<PromptWait>.fromOpaque(data).release() } })
        defer { g_dbus_connection_signal_unsubscribe(service.bus, subscription) }
        // A provider that quits or crashes never sends `Completed`: its leaving the bus ends
        // the wait at once (a wait for a person may otherwise last minutes). Delivered to this
        // thread's context too.
        let watched = Unmanaged.passRetained(wait).toOpaque()
        let watcher = g_bus_watch_name_on_connection(
            service.bus, service.busName, G_BUS_NAME_WATCHER_FLAGS_NONE, nil,
            { _, _, data in
                guard let data else { return }
                Unmanaged<PromptWait>.fromOpaque(data).takeUnretainedValue().providerLeft()
            },
            watched, { data in if let data { Unmanaged<PromptWait>.fromOpaque(data).release() } })
        defer { g_bus_unwatch_name(watcher) }
        // Wakes the loop below when the deadline passes or the task is cancelled.
        let wakeUp = g_cancellable_source_new(deadline.cancellable)!
        g_source_set_callback(wakeUp, unsafeBitCast(PromptWait.stopWaiting, to: GSourceFunc.self), nil, nil)
        g_source_attach(wakeUp, context)
        defer {
            g_source_destroy(wakeUp)
            g_source_unref(wakeUp)
        }

        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            service.bus, service.busName, path, "org.freedesktop.Secret.Prompt", "Prompt", GVariantReading.makeStringTuple([""]),
            nil, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, &error)
        if let reply { g_variant_unref(reply) }
        if let error {
            let failure = GLibError(taking: error)
            return g_cancellable_is_cancelled(deadline.cancellable) != 0 ? .interrupted : .failed(failure)
        }
        hooks?.promptIsWaiting()
        while wait.outcome == nil && g_cancellable_is_cancelled(deadline.cancellable) == 0 {
            g_main_context_iteration(context, 1)
        }
        return wait.outcome ?? .interrupted
    }

    /// How the provider took `Prompt.Dismiss`.
    private enum Dismissal {
        /// It answered (the prompt is dismissed, or was already gone).
        case answered
        /// It did not answer within the second allowed (stopped or hung).
        case noAnswer
        /// The call failed: the provider left the bus (`invalidatesConnection`), or it answered
        /// with an error (no such prompt any more, say).
        case failed(GLibError)
    }

    /// `Prompt.Dismiss`, bounded by a second of its own (the operation's time is up). The
    /// provider's pending request is only tidied away; how it took the call tells whether it
    /// still answers.
    private func dismissPrompt(_ path: String) -> Dismissal {
        let tidy = Deadline(.seconds(1))
        defer { tidy.finish() }
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            service.bus, service.busName, path, "org.freedesktop.Secret.Prompt", "Dismiss", nil, nil, G_DBUS_CALL_FLAGS_NONE, -1,
            tidy.cancellable, &error)
        if let reply { g_variant_unref(reply) }
        guard let error else { return .answered }
        if tidy.hasExpired {
            g_error_free(error)
            return .noAnswer
        }
        return .failed(GLibError(taking: error))
    }
}

/// The state of one prompt wait, filled in by the `Completed` signal on the waiting thread's
/// own main context (so touched by that thread only).
final class PromptWait {
    enum Outcome {
        /// Completed; the result (owned).
        case completed(OpaquePointer)
        /// Dismissed by the provider or the person.
        case dismissed
        /// The provider left the bus (quit or crashed) before the prompt completed.
        case providerLeft
        /// `Prompt.Prompt` itself failed.
        case failed(GLibError)
        /// The deadline passed or the task was cancelled first.
        case interrupted
    }

    var outcome: Outcome?

    /// `Completed(dismissed b, result v)`.
    func complete(_ parameters: OpaquePointer) {
        guard outcome == nil, g_variant_n_children(parameters) == 2,
            let dismissed = g_variant_get_child_value(parameters, 0), let boxed = g_variant_get_child_value(parameters, 1)
        else { return }
        defer {
            g_variant_unref(dismissed)
            g_variant_unref(boxed)
        }
        if g_variant_get_boolean(dismissed) != 0 {
            outcome = .dismissed
        } else if let result = g_variant_get_variant(boxed) {
            outcome = .completed(result)
        } else {
            outcome = .dismissed
        }
    }

    /// The provider's bus name lost its owner.
    func providerLeft() {
        if outcome == nil { outcome = .providerLeft }
    }

    /// The callback of the cancellable's source: nothing to do but end that iteration.
    static let stopWaiting: @convention(c) (UnsafeMutablePointer<GCancellable>?, gpointer?) -> gboolean = { _, _ in 0 }
}
