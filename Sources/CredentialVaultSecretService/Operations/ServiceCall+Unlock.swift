import CLibSecret
import CredentialVault

extension ServiceCall {
    /// The operation met something locked: the collection at `collection`, or `items` of it.
    /// Never returns. When the lock can be lifted here it is (`Service.Unlock` and its prompt)
    /// and the operation is run again (`Rerun.unlocked`, once); otherwise this throws what the
    /// caller must know:
    /// - a locked collection is unlocked when the provider does it without a person (KWallet
    ///   while its wallet is open: at every login the collection reports `Locked` until a
    ///   client asks) or interaction is allowed (its unlock dialog); else `locked`, the
    ///   collection untouched (no dialog is opened behind the caller's back);
    /// - items locked in an unlocked collection are a provider asking to confirm this program's
    ///   access (KeePassXC's "confirm access", on by default): unlocked with its dialog when
    ///   interaction is allowed, else `interactionRequired`.
    func lockedFound(items: [String] = [], in collection: String?) throws(CredentialVaultError) -> Never {
        // Once unlocked and still locked (locked again meanwhile, or the prompt lied): report it.
        if earlier.contains(.unlocked) { throw .locked }
        guard let collection else { throw .locked }
        if try isLocked(collection: collection) {
            var allowed = policy.allowsInteraction
            if !allowed { allowed = try opensWithoutPerson(collection) }
            guard allowed else { throw .locked }
            try unlock([collection], for: .unlockCollection)
        } else if !items.isEmpty {
            guard policy.allowsInteraction else { throw .interactionRequired(interactionMessage(.confirmAccess)) }
            try unlock(items, for: .confirmAccess)
        }
        // Unlocked (or found unlocked after all: it was unlocked meanwhile): run the operation again.
        rerun = .unlocked
        throw .locked
    }

    /// `Service.Unlock` of `objects`, running the prompt it returns (see `runPrompt`); throws
    /// `locked` unless every object was unlocked.
    func unlock(_ objects: [String], for purpose: PromptPurpose) throws(CredentialVaultError) {
        var paths: [OpaquePointer?] = objects.map { g_variant_new_object_path($0) }
        let pathType = g_variant_type_new("o")
        defer { g_variant_type_free(pathType) }
        let list = paths.withUnsafeMutableBufferPointer { g_variant_new_array(pathType, $0.baseAddress, gsize($0.count)) }
        var arguments: [OpaquePointer?] = [list]
        let parameters = arguments.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1)! }
        guard let reply = try callService("Unlock", parameters, replyType: "(aoo)") else { throw .locked }
        defer { g_variant_unref(reply) }
        var unlocked = Set(GVariantReading.strings(reply, child: 0))
        if let prompt = GVariantReading.path(reply, child: 1) {
            guard let result = try reportingPrompt(for: purpose, { () throws(CredentialVaultError) in try runPrompt(prompt, for: purpose) }) else {
                throw .locked
            }
            defer { g_variant_unref(result) }
            // The result is the `ao` of the objects unlocked.
            unlocked.formUnion(GVariantReading.strings(inArray: result))
        }
        guard objects.allSatisfy(unlocked.contains) else { throw .locked }
    }

    /// Whether the provider unlocks the collection at `path` without asking anybody: KWallet
    /// does while the wallet behind it is open (`org.kde.KWallet.isOpen`), as after a login
    /// with pam_kwallet. Another provider's unlock is a password dialog.
    func opensWithoutPerson(_ path: String) throws(CredentialVaultError) -> Bool {
        guard service.provider == .kwallet, let kwallet = service.kwalletName else { return false }
        // The wallet of a KWallet collection is its label.
        let label = try collectionInfo(path).label
        let module = "/modules/" + (kwallet.split(separator: ".").last.map(String.init) ?? "kwalletd5")
        let replyType = g_variant_type_new("(b)")
        defer { g_variant_type_free(replyType) }
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            service.bus, kwallet, module, "org.kde.KWallet", "isOpen", GVariantReading.makeStringTuple([label]),
            replyType, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, &error)
        if let error {
            let failure = GLibError(taking: error)
            if deadline.hasExpired || deadline.wasCancelled { throw fail(failure) }
            return false
        }
        guard let reply else { return false }
        defer { g_variant_unref(reply) }
        guard let open = g_variant_get_child_value(reply, 0) else { return false }
        defer { g_variant_unref(open) }
        return g_variant_get_boolean(open) != 0
    }
}
