import CLibSecret
import CredentialVault
import Foundation

extension ServiceCall {
    /// `Service.SearchItems` for `identity`, and `Collection.CreateItem` with *replace* in the
    /// collection at `collection`, sent back to back without waiting in between (`Pipeline`):
    /// they cost about one round trip, that of the create. Returns what the search found and
    /// the path of the item written: the item of that collection whose attributes include all of
    /// `attributes` (and this backend's `xdg:schema`), given the new label and value in place,
    /// or else a new one.
    ///
    /// The search is answered before the create by the daemons that answer in order (see
    /// `Pipeline`); callers must only rely on it listing every item that existed before, among
    /// which the written one may be.
    ///
    /// The create is made on the D-Bus API, not through libsecret (which would show any prompt
    /// the provider asks for): a provider that answers with a prompt, to unlock the collection,
    /// gets it dismissed, and this throws `locked`. gnome-keyring answers `IsLocked` (`locked`).
    func searchAndReplace(
        _ identity: [String: String], in collection: String, attributes: [String: String], label: String, value: Data
    ) throws(CredentialVaultError) -> (found: Found, item: String) {
        let attributes = Self.withSchema(attributes)
        let secretValue = SecretValueBridge.makeValue(value)
        defer { secret_value_unref(UnsafeMutableRawPointer(secretValue)) }
        guard let secret = paths.encodeSecret(service.pointer, secretValue) else {
            throw .notAvailable("no open session with the Secret Service; retry")
        }
        let properties = GVariantReading.makePropertyDictionary([
            ("org.freedesktop.Secret.Item.Label", g_variant_new_string(label)),
            ("org.freedesktop.Secret.Item.Attributes", GVariantReading.makeStringDictionary(attributes)),
        ])
        var createArguments: [OpaquePointer?] = [properties, secret, g_variant_new_boolean(1)]
        var searchArguments: [OpaquePointer?] = [GVariantReading.makeStringDictionary(identity)]
        let calls = [
            PipelinedCall(
                path: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service", method: "SearchItems",
                parameters: searchArguments.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) },
                replyType: "(aoao)"),
            PipelinedCall(
                path: collection, interface: "org.freedesktop.Secret.Collection", method: "CreateItem",
                parameters: createArguments.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 3) },
                replyType: "(oo)"),
        ]
        let replies = Pipeline.run(calls, bus: service.bus, name: service.busName, cancellable: deadline.cancellable)
        defer {
            for case .success(let reply) in replies { g_variant_unref(reply) }
        }
        // The create's outcome first: it tells what became of the value.
        let item: String
        switch replies[1] {
        case .failure(let error):
            if error.isNoSuchObject { throw staleAlias() }
            throw fail(error)
        case .success(let reply):
            let (path, prompt) = Self.createAnswer(reply)
            if let prompt {
                dismiss(prompt)
                throw .locked
            }
            guard let path else { throw .io("the Secret Service did not return the item it created") }
            item = path
        }
        switch replies[0] {
        case .failure(let error):
            throw fail(error)
        case .success(let reply):
            return (Found(unlocked: GVariantReading.strings(reply, child: 0), locked: GVariantReading.strings(reply, child: 1)), item)
        }
    }

    /// The item path and prompt path of a `CreateItem` reply `(oo)`; `/` (none) as `nil`.
    private static func createAnswer(_ reply: OpaquePointer) -> (item: String?, prompt: String?) {
        func path(_ index: gsize) -> String? {
            guard let child = g_variant_get_child_value(reply, index) else { return nil }
            defer { g_variant_unref(child) }
            return GVariantReading.string(child).flatMap { $0 == "/" || $0.isEmpty ? nil : $0 }
        }
        return (path(0), path(1))
    }

    /// `Prompt.Dismiss` on the prompt at `path` (the provider's pending request for the user),
    /// ignoring failures: it is only tidying up.
    private func dismiss(_ path: String) {
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            service.bus, service.busName, path, "org.freedesktop.Secret.Prompt", "Dismiss", nil, nil, G_DBUS_CALL_FLAGS_NONE, -1,
            deadline.cancellable, &error)
        if let reply { g_variant_unref(reply) }
        if let error { g_error_free(error) }
    }
}
