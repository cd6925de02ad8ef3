import CLibSecret

/// Tells which program serves the Secret Service: the owner of `org.freedesktop.secrets` is
/// compared with the owners of the names each known provider also takes
/// (`SecretServiceProvider.markers`). One round trip to the bus daemon (the questions are
/// pipelined), made once per connection; the provider itself is not asked.
enum ProviderIdentification {
    /// The provider on `bus`, and KWallet's own bus name when it is KWallet. `.other` when it
    /// cannot be told (the questions failed: the names are for messages and workarounds only).
    static func identify(
        on bus: OpaquePointer, serviceName: String, cancellable: UnsafeMutablePointer<GCancellable>
    ) -> (SecretServiceProvider, kwalletName: String?) {
        let names = [serviceName] + SecretServiceProvider.markers.map(\.name)
        let calls = names.map { name in
            PipelinedCall(
                path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", method: "GetNameOwner",
                parameters: GVariantReading.makeStringTuple([name]), replyType: "(s)")
        }
        let replies = Pipeline.run(calls, bus: bus, name: "org.freedesktop.DBus", cancellable: cancellable)
        let owners = replies.map { reply -> String? in
            guard case .success(let variant) = reply else { return nil }
            defer { g_variant_unref(variant) }
            guard let child = g_variant_get_child_value(variant, 0) else { return nil }
            defer { g_variant_unref(child) }
            return GVariantReading.string(child)
        }
        guard let serviceOwner = owners[0] else { return (.other, nil) }
        for (index, marker) in SecretServiceProvider.markers.enumerated() where owners[index + 1] == serviceOwner {
            return (marker.provider, marker.provider == .kwallet ? marker.name : nil)
        }
        return (.other, nil)
    }
}
