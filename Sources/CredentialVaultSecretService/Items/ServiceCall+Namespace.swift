import CLibSecret
import CredentialVault

extension ServiceCall {
    /// Two `Service.SearchItems` sent back to back without waiting in between (`Pipeline`):
    /// about one round trip for both. Each answer lists the items of every collection whose
    /// attributes include the given ones, unlocked and locked apart.
    func search(_ first: [String: String], _ second: [String: String]) throws(CredentialVaultError) -> (Found, Found) {
        try checkBeforeSearch()
        let calls = [first, second].map { attributes in
            var arguments: [OpaquePointer?] = [GVariantReading.makeStringDictionary(attributes)]
            return PipelinedCall(
                path: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service", method: "SearchItems",
                parameters: arguments.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) },
                replyType: "(aoao)")
        }
        let replies = Pipeline.run(calls, bus: service.bus, name: service.busName, cancellable: deadline.cancellable)
        defer {
            for case .success(let reply) in replies { g_variant_unref(reply) }
        }
        var found: [Found] = []
        for reply in replies {
            switch reply {
            case .failure(let error): throw fail(error)
            case .success(let reply):
                found.append(Found(unlocked: GVariantReading.strings(reply, child: 0), locked: GVariantReading.strings(reply, child: 1)))
            }
        }
        return (found[0], found[1])
    }
}
