import CLibSecret

/// One D-Bus method call of a `Pipeline`.
struct PipelinedCall {
    /// The object path called.
    let path: String
    /// The interface of the method.
    let interface: String
    /// The method name.
    let method: String
    /// The arguments: a floating tuple `GVariant`, consumed by the send.
    let parameters: OpaquePointer
    /// The type the reply must have, e.g. `(aoao)` (a mismatch is an error).
    let replyType: String
}

/// Several D-Bus method calls sent back to back on one connection before any reply is awaited,
/// so that together they cost about one round trip instead of one each.
///
/// The bus delivers the messages of one connection in order, and a Secret Service daemon
/// (gnome-keyring, KeePassXC) answers them one at a time in that order, so each call sees the
/// effects of the ones before it. Callers must not depend on that for correctness, only for
/// speed: a provider could answer them in another order.
enum Pipeline {
    /// Sends `calls` in order on `bus` to `name`, then waits for every reply (cancelled with
    /// `cancellable`). Each result is the reply (owned: release it with `g_variant_unref`) or
    /// the error of that call.
    static func run(
        _ calls: [PipelinedCall], bus: OpaquePointer, name: String, cancellable: UnsafeMutablePointer<GCancellable>
    ) -> [Result<OpaquePointer, GLibError>] {
        // The replies are dispatched to the thread-default context of the thread that sent the
        // calls: a private one, iterated here until they are all in.
        let context = g_main_context_new()
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let replies = Replies(count: calls.count)
        for (index, call) in calls.enumerated() {
            let replyType = g_variant_type_new(call.replyType)
            defer { g_variant_type_free(replyType) }
            let slot = Unmanaged.passRetained(Slot(replies: replies, index: index)).toOpaque()
            g_dbus_connection_call(
                bus, name, call.path, call.interface, call.method, call.parameters, replyType, G_DBUS_CALL_FLAGS_NONE, -1,
                cancellable,
                { source, result, data in
                    guard let data else { return }
                    let slot = Unmanaged<Slot>.fromOpaque(data).takeRetainedValue()
                    var error: UnsafeMutablePointer<GError>?
                    let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error)
                    if let error {
                        if let reply { g_variant_unref(reply) }
                        slot.replies.results[slot.index] = .failure(GLibError(taking: error))
                    } else if let reply {
                        slot.replies.results[slot.index] = .success(reply)
                    } else {
                        slot.replies.results[slot.index] = .failure(
                            GLibError(taking: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_FAILED.rawValue), "no reply")))
                    }
                    slot.replies.pending -= 1
                },
                slot)
        }
        while replies.pending > 0 { g_main_context_iteration(context, 1) }
        return replies.results.map { $0! }
    }

    /// The replies received so far (touched only on the calling thread, by its own context).
    private final class Replies {
        var results: [Result<OpaquePointer, GLibError>?]
        var pending: Int

        init(count: Int) {
            results = Array(repeating: nil, count: count)
            pending = count
        }
    }

    /// Which reply a callback fills in.
    private final class Slot {
        let replies: Replies
        let index: Int

        init(replies: Replies, index: Int) {
            self.replies = replies
            self.index = index
        }
    }
}
