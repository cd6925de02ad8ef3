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
    /// The create is made on the D-Bus API. A provider that answers it with a prompt has it run
    /// (`createdItem`: KeePassXC answers every create with one, which completes by itself while
    /// the database is unlocked). A locked collection (gnome-keyring answers `IsLocked`) is
    /// handled by `lockedFound`.
    func searchAndReplace(
        _ identity: [String: String], in collection: String, attributes: [String: String], label: String, value: Data
    ) throws(CredentialVaultError) -> (found: Found, item: String) {
        try checkBeforeSearch()
        let createArguments = try createParameters(attributes: attributes, label: label, value: value, replace: true)
        var searchArguments: [OpaquePointer?] = [GVariantReading.makeStringDictionary(identity)]
        let calls = [
            PipelinedCall(
                path: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service", method: "SearchItems",
                parameters: searchArguments.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) },
                replyType: "(aoao)"),
            PipelinedCall(
                path: collection, interface: "org.freedesktop.Secret.Collection", method: "CreateItem",
                parameters: createArguments, replyType: "(oo)"),
        ]
        let replies = Pipeline.run(calls, bus: service.bus, name: service.busName, cancellable: deadline.cancellable)
        defer {
            for case .success(let reply) in replies { g_variant_unref(reply) }
        }
        // The create's outcome first: it tells what became of the value.
        let item: String
        switch replies[1] {
        case .failure(let error):
            if error.refusesSentSecret { throw sentSecretRefused() }
            if error.isNoSuchObject { throw staleAlias() }
            let failure = fail(error)
            if case .locked = failure { try lockedFound(in: collection) }
            throw failure
        case .success(let reply):
            item = try createdItem(reply)
        }
        switch replies[0] {
        case .failure(let error):
            throw fail(error)
        case .success(let reply):
            return (Found(unlocked: GVariantReading.strings(reply, child: 0), locked: GVariantReading.strings(reply, child: 1)), item)
        }
    }
}
