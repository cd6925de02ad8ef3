import CLibSecret
import CredentialVault
import Foundation
import Logging

/// One public operation's access to the Secret Service: the shared connection, the operation's
/// deadline (one `GCancellable` for every D-Bus round trip it makes) and the mapping of glib
/// errors to `CredentialVaultError`. Used on one thread, for one operation.
///
/// Everything here works on object paths, one D-Bus round trip per call, on the held
/// connection: no `GDBusProxy` is made per collection or item (see `PathCalls`).
final class ServiceCall {
    /// The well-known collection aliases.
    enum Alias: String {
        /// The user's main collection (gnome-keyring's "login" keyring), where `secret-tool` and
        /// Python `keyring` store.
        case `default`
        /// The collection kept in the daemon's memory only, gone at logout.
        case session
    }

    /// The result of `Service.SearchItems`: matching item paths, split by lock state.
    struct Found {
        var unlocked: [String] = []
        var locked: [String] = []

        /// The paths of items in the collection at `collection` (`nil`: none).
        func unlocked(in collection: String?) -> [String] { collection.map { c in unlocked.filter { Self.isItem($0, of: c) } } ?? [] }
        func locked(in collection: String?) -> [String] { collection.map { c in locked.filter { Self.isItem($0, of: c) } } ?? [] }

        /// Item paths are `<collection path>/<item>` (Secret Service API: object paths).
        static func isItem(_ item: String, of collection: String) -> Bool {
            item.count > collection.count + 1 && item.hasPrefix(collection) && item.utf8.dropFirst(collection.utf8.count).first == UInt8(ascii: "/")
        }
    }

    /// Why an operation is run again from the start, within its deadline (each reason once):
    /// the thrown error is reported when the reason was used up.
    enum Rerun: Hashable {
        /// A remembered alias named a collection that is gone: the aliases are read again.
        case staleAlias
        /// Something locked was unlocked (`lockedFound`).
        case unlocked
        /// A secret the provider sent could not be decrypted (`secretUnreadable`), or the
        /// provider could not decrypt the one sent to it (`sentSecretRefused`): a new session
        /// is made.
        case newSession
    }

    /// What an operation may do when the provider asks for a person.
    struct Policy {
        /// `SecretServiceConfiguration.allowsInteraction`.
        var allowsInteraction = false
        /// How long a prompt may wait for a person when that is allowed.
        var interactionTimeout: Duration = .seconds(120)
        /// Where the operation logs its prompts (`SecretServiceConfiguration.logger`).
        var logger: Logger = .credentialVaultSilent
        /// Where it counts them (`SecretServiceConfiguration.metrics`).
        var metrics = VaultMetrics()
    }

    let deadline: Deadline
    let service: ServiceHandle
    private let connection: ServiceConnection
    let paths: PathCalls
    let policy: Policy
    /// The reruns this operation already had (`SecretServiceStore.perform`).
    let earlier: Set<Rerun>
    /// The store's seams for tests (`StoreTestHooks`).
    let hooks: StoreTestHooks?
    /// Set when the operation must run again (see `Rerun`), before the error that stops this run.
    var rerun: Rerun?
    /// Whether the default collection's lock state was asked before searching (KeePassXC).
    private var checkedBeforeSearch = false

    /// Connects (or reuses the connection) within `deadline`.
    init(
        connection: ServiceConnection, deadline: Deadline, policy: Policy = Policy(), earlier: Set<Rerun> = [],
        hooks: StoreTestHooks? = nil
    ) throws(CredentialVaultError) {
        self.connection = connection
        self.deadline = deadline
        self.policy = policy
        self.earlier = earlier
        self.hooks = hooks
        guard let paths = PathCalls.shared else {
            throw .unsupported("this libsecret lacks the object-path functions (secret-paths.h) this backend uses")
        }
        self.paths = paths
        do {
            service = try connection.service(cancellable: deadline.cancellable)
        } catch {
            throw error.vaultError(deadlineExpired: deadline.hasExpired)
        }
    }

    /// The vault error for `error`; drops the connection when it is no use any more.
    func fail(_ error: GLibError) -> CredentialVaultError {
        if error.invalidatesConnection { connection.reset(ifStill: service) }
        return error.vaultError(deadlineExpired: deadline.hasExpired, provider: service.provider)
    }

    /// The provider left the bus while this operation waited for its prompt (it quit or
    /// crashed): `notAvailable` naming it, and the connection dropped.
    func providerLeftDuringPrompt() -> CredentialVaultError {
        connection.reset(ifStill: service)
        return .notAvailable(
            "\(service.provider) left the D-Bus session bus while its prompt was pending: it quit or crashed; "
                + "start it again, or choose another backend")
    }

    /// The error for a remembered collection that turned out to be gone: the aliases are read
    /// again and the operation retried once.
    func staleAlias() -> CredentialVaultError {
        rerun = .staleAlias
        service.forgetAliases()
        return .io("the Secret Service collection behind an alias disappeared")
    }

    /// `path` was found (unlocked) but `GetSecrets` left its value out: libsecret drops a secret
    /// it cannot decrypt, which happens when the session's key was negotiated wrongly (kwalletd5
    /// before KWallet 6.25, KDE bug 514194, in about 0.5 % of sessions). Never "not found": the
    /// connection is dropped and the operation run once more with a new session; a second
    /// failure is this error.
    func secretUnreadable() -> CredentialVaultError {
        renewSession(
            "\(service.provider) listed the item but sent a secret this process could not decrypt "
                + "(twice, each with a new session): retry; with kwalletd5 this is KDE bug 514194, fixed in KWallet 6.25")
    }

    /// The provider refused the secret `CreateItem` sent (`GLibError.refusesSentSecret`): the
    /// session's key is wrong (kwalletd5 before KWallet 6.25, KDE bug 514194) and the value was
    /// not written. The connection is dropped and the operation run once more with a new
    /// session (a half-made item kwalletd5 leaves has the same attributes, so the replacing
    /// create of the rerun writes into it); a second refusal is this error.
    func sentSecretRefused() -> CredentialVaultError {
        renewSession(
            "\(service.provider) could not decrypt the secret this process sent (twice, each with a new session): "
                + "nothing was stored; retry; with kwalletd5 this is KDE bug 514194, fixed in KWallet 6.25")
    }

    /// A session key the provider and this process do not share: the operation is run once
    /// more on a new connection (a new session); `message` is the error when that fails too.
    private func renewSession(_ message: String) -> CredentialVaultError {
        rerun = .newSession
        connection.reset(ifStill: service)
        return .io(message)
    }

    // MARK: - Collections

    /// The path of the collection behind `alias`, or `nil` when the service has none.
    /// Remembered on the connection (`ServiceHandle.aliasLifetime`).
    func collectionPath(_ alias: Alias) throws(CredentialVaultError) -> String? {
        if let cached = service.cachedAlias(alias.rawValue) { return cached }
        let read: UnsafeMutablePointer<gchar>?
        do {
            read = try withGError { paths.readAlias(service.pointer, alias.rawValue, deadline.cancellable, $0) }
        } catch {
            throw fail(error)
        }
        var path = read.map { String(cString: $0) }
        g_free(read)
        if path == "/" { path = nil }
        service.remember(alias: alias.rawValue, path: path)
        return path
    }

    /// Whether the collection at `path` is locked, asked now (`Properties.Get`, never prompts).
    func isLocked(collection path: String) throws(CredentialVaultError) -> Bool {
        guard let value = try property(path, interface: "org.freedesktop.Secret.Collection", name: "Locked") else {
            throw staleAlias()
        }
        defer { g_variant_unref(value) }
        guard String(cString: g_variant_get_type_string(value)) == "b" else {
            throw .io("the Secret Service answered something unexpected (Locked is not a boolean)")
        }
        return g_variant_get_boolean(value) != 0
    }

    /// Handles a locked collection at `path` (`lockedFound`: unlocked and the operation run
    /// again, or `locked`).
    func requireUnlocked(_ path: String?) throws(CredentialVaultError) {
        if let path, try isLocked(collection: path) { try lockedFound(in: path) }
    }

    /// Whether the item at `path` is locked (`Properties.Get`); `nil` when it is gone.
    func isLocked(item path: String) throws(CredentialVaultError) -> Bool? {
        guard let value = try property(path, interface: "org.freedesktop.Secret.Item", name: "Locked") else { return nil }
        defer { g_variant_unref(value) }
        return String(cString: g_variant_get_type_string(value)) == "b" ? g_variant_get_boolean(value) != 0 : false
    }

    /// The label and lock state of the collection at `path`.
    func collectionInfo(_ path: String) throws(CredentialVaultError) -> (label: String, isLocked: Bool) {
        var label = ""
        var locked: Bool?
        let found = try properties(path, interface: "org.freedesktop.Secret.Collection") { name, value in
            switch name {
            case "Label": label = GVariantReading.string(value) ?? ""
            case "Locked" where String(cString: g_variant_get_type_string(value)) == "b": locked = g_variant_get_boolean(value) != 0
            default: break
            }
        }
        guard found else { throw staleAlias() }
        guard let locked else { throw .io("the Secret Service answered something unexpected (no Locked property)") }
        return (label, locked)
    }

    // MARK: - Items

    /// `Service.SearchItems`: the items of every collection whose attributes include
    /// `attributes` (all items for an empty table), unlocked and locked ones apart. Never
    /// unlocks anything and never loads secrets.
    func search(_ attributes: [String: String]) throws(CredentialVaultError) -> Found {
        try checkBeforeSearch()
        let table = AttributeTable(attributes)
        // libsecret refuses a schema search without attributes; without a schema it matches every item.
        let schema = attributes.isEmpty ? nil : UnsafePointer(CredentialSchema.shared.pointer)
        var unlocked: PathCalls.PathList?
        var locked: PathCalls.PathList?
        defer {
            g_strfreev(unlocked)
            g_strfreev(locked)
        }
        do {
            _ = try withGError { paths.search(service.pointer, schema, table.table, deadline.cancellable, &unlocked, &locked, $0) }
        } catch {
            throw fail(error)
        }
        let found = Found(unlocked: Self.strings(unlocked), locked: Self.strings(locked))
        // An empty search matches every item (the specification); KeePassXC answers it with
        // nothing. The collection's `Items` lists them.
        if attributes.isEmpty, found.unlocked.isEmpty, found.locked.isEmpty, let main = try collectionPath(.default) {
            return Found(unlocked: try items(of: main))
        }
        return found
    }

    /// The items of the collection at `path` (its `Items` property).
    func items(of path: String) throws(CredentialVaultError) -> [String] {
        guard let value = try property(path, interface: "org.freedesktop.Secret.Collection", name: "Items") else {
            throw staleAlias()
        }
        defer { g_variant_unref(value) }
        return GVariantReading.strings(inArray: value)
    }

    /// KeePassXC, with "unlock before search" (its default), answers a search of a locked
    /// database only once a person has answered the unlock dialog the search opens. So on
    /// KeePassXC the default collection's `Locked` is asked first (once per operation): a
    /// locked one is handled by `lockedFound` (no dialog unless interaction is allowed).
    func checkBeforeSearch() throws(CredentialVaultError) {
        guard service.provider == .keePassXC, !checkedBeforeSearch else { return }
        checkedBeforeSearch = true
        if let main = try collectionPath(.default), try isLocked(collection: main) { try lockedFound(in: main) }
    }

    /// The attributes, label and times of the item at `path` (`Properties.GetAll`); `nil` when
    /// the item was deleted meanwhile.
    func info(_ path: String) throws(CredentialVaultError) -> ItemInfo? {
        var attributes: [String: String] = [:]
        var label = ""
        var created: UInt64 = 0
        var modified: UInt64 = 0
        let found = try properties(path, interface: "org.freedesktop.Secret.Item") { name, value in
            let type = String(cString: g_variant_get_type_string(value))
            switch (name, type) {
            case ("Attributes", _): attributes = GVariantReading.stringDictionary(value)
            case ("Label", _): label = GVariantReading.string(value) ?? ""
            case ("Created", "t"): created = UInt64(g_variant_get_uint64(value))
            case ("Modified", "t"): modified = UInt64(g_variant_get_uint64(value))
            default: break
            }
        }
        return found ? ItemInfo(objectPath: path, attributes: attributes, label: label, created: created, modified: modified) : nil
    }

    /// `Collection.SearchItems` on the collection at `collection`: its matching items, locked or
    /// not. `nil` when the collection is gone.
    func search(in collection: String, _ attributes: [String: String]) throws(CredentialVaultError) -> [String]? {
        try checkBeforeSearch()
        let arguments = GVariantReading.makeStringDictionary(attributes)
        var children: [OpaquePointer?] = [arguments]
        let parameters = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) }
        let reply: OpaquePointer?
        do {
            reply = try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, collection, "org.freedesktop.Secret.Collection", "SearchItems",
                    parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject { return nil }
            throw fail(error)
        }
        guard let reply else { return nil }
        defer { g_variant_unref(reply) }
        return GVariantReading.strings(reply, child: 0)
    }

    /// The infos of the items at `paths` that still exist.
    func infos(_ paths: [String]) throws(CredentialVaultError) -> [ItemInfo] {
        var result: [ItemInfo] = []
        for path in paths {
            if let info = try info(path) { result.append(info) }
        }
        return result
    }

    /// `Collection.CreateItem` in the collection at `collection`, always a new item (a replacing
    /// save is `searchAndReplace`); returns the item's path. A prompt the provider answers with
    /// is run (`createdItem`).
    func createItem(
        in collection: String, attributes: [String: String], label: String, value: Data
    ) throws(CredentialVaultError) -> String {
        let parameters = try createParameters(attributes: attributes, label: label, value: value, replace: false)
        let reply: OpaquePointer?
        do {
            reply = try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, collection, "org.freedesktop.Secret.Collection", "CreateItem", parameters,
                    nil, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, $0)
            }
        } catch {
            if error.refusesSentSecret { throw sentSecretRefused() }
            if error.isNoSuchObject { throw staleAlias() }
            throw fail(error)
        }
        guard let reply else { throw .io("the Secret Service did not answer CreateItem") }
        defer { g_variant_unref(reply) }
        return try createdItem(reply)
    }

    /// The arguments of `Collection.CreateItem` (floating): the label and attributes (with
    /// `xdg:schema`), the value encrypted for this connection's session, and `replace`.
    func createParameters(
        attributes: [String: String], label: String, value: Data, replace: Bool
    ) throws(CredentialVaultError) -> OpaquePointer {
        let secretValue = SecretValueBridge.makeValue(value)
        defer { secret_value_unref(UnsafeMutableRawPointer(secretValue)) }
        guard var secret = paths.encodeSecret(service.pointer, secretValue) else {
            throw .notAvailable("no open session with the Secret Service; retry")
        }
        if hooks?.corruptsNextSentSecret() == true { secret = StoreTestHooks.cutShort(secret) }
        let properties = GVariantReading.makePropertyDictionary([
            ("org.freedesktop.Secret.Item.Label", g_variant_new_string(label)),
            ("org.freedesktop.Secret.Item.Attributes", GVariantReading.makeStringDictionary(Self.withSchema(attributes))),
        ])
        var arguments: [OpaquePointer?] = [properties, secret, g_variant_new_boolean(replace ? 1 : 0)]
        return arguments.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 3) }
    }

    /// The item a `CreateItem` reply `(oo)` names: the item path, or, when the provider answered
    /// with a prompt (KeePassXC always does; any provider to unlock first), the path the prompt
    /// completes with (`runPrompt`). A dismissed prompt stored nothing: `permissionDenied`.
    func createdItem(_ reply: OpaquePointer) throws(CredentialVaultError) -> String {
        if let item = GVariantReading.path(reply, child: 0) { return item }
        guard let prompt = GVariantReading.path(reply, child: 1) else {
            throw .io("the Secret Service did not return the item it created")
        }
        guard let result = try runPrompt(prompt, for: .store) else {
            throw .permissionDenied("\(service.provider) dismissed the request to store the item: nothing was stored")
        }
        defer { g_variant_unref(result) }
        // The result is the new item's path (`o`); some providers wrap it in an array.
        if let item = GVariantReading.string(result).flatMap({ $0 == "/" ? nil : $0 }) ?? GVariantReading.strings(inArray: result).first {
            return item
        }
        throw .io("the Secret Service's prompt did not return the item it created")
    }

    /// `attributes` plus what libsecret's schema-based create records (`xdg:schema`), so that
    /// secret-tool shows the schema.
    static func withSchema(_ attributes: [String: String]) -> [String: String] {
        var attributes = attributes
        attributes["xdg:schema"] = CredentialSchema.name
        return attributes
    }

    /// Deletes the item at `path` (`Item.Delete`, running the prompt a provider may answer with:
    /// KeePassXC confirms deletions by default); `false` when it was already gone (deleted by
    /// someone else meanwhile).
    func delete(_ path: String) throws(CredentialVaultError) -> Bool {
        let reply: OpaquePointer?
        do {
            reply = try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, path, "org.freedesktop.Secret.Item", "Delete", nil, nil, G_DBUS_CALL_FLAGS_NONE,
                    -1, deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject { return false }
            throw fail(error)
        }
        guard let reply else { return true }
        defer { g_variant_unref(reply) }
        guard let prompt = GVariantReading.path(reply, child: 0) else { return true }
        guard let result = try runPrompt(prompt, for: .delete) else {
            throw .permissionDenied("\(service.provider) dismissed the request to delete the item: it was kept")
        }
        g_variant_unref(result)
        return true
    }

    /// The values of the items at `itemPaths` (`Service.GetSecrets`, one round trip). Items
    /// that are gone or locked are missing from the result.
    func secrets(_ itemPaths: [String]) throws(CredentialVaultError) -> [String: Data] {
        guard !itemPaths.isEmpty else { return [:] }
        let copies = itemPaths.map { UnsafePointer(g_strdup($0)) }
        defer { for copy in copies { g_free(UnsafeMutableRawPointer(mutating: copy)) } }
        var list: [UnsafePointer<gchar>?] = copies + [nil]
        let table: OpaquePointer?
        do {
            table = try list.withUnsafeMutableBufferPointer { buffer throws(GLibError) in
                try withGError { paths.getSecrets(service.pointer, buffer.baseAddress, deadline.cancellable, $0) }
            }
        } catch {
            if error.isNoSuchObject { return [:] }
            throw fail(error)
        }
        guard let table else { return [:] }
        defer { g_hash_table_unref(table) }
        var result: [String: Data] = [:]
        for path in itemPaths {
            guard let value = path.withCString({ g_hash_table_lookup(table, $0) }) else { continue }
            // As libsecret does with a secret it cannot decrypt (see `secretUnreadable`).
            if hooks?.dropsNextSecret() == true { continue }
            result[path] = SecretValueBridge.bytes(of: OpaquePointer(value))
        }
        return result
    }

    /// A method of the Service object (`/org/freedesktop/secrets`) with floating `parameters`;
    /// the reply (owned), or `nil` when the object does not exist.
    func callService(_ method: String, _ parameters: OpaquePointer, replyType: String) throws(CredentialVaultError) -> OpaquePointer? {
        let type = g_variant_type_new(replyType)
        defer { g_variant_type_free(type) }
        do {
            return try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", method, parameters,
                    type, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject { return nil }
            throw fail(error)
        }
    }

    // MARK: - D-Bus properties

    /// `Properties.Get`; `nil` when the object does not exist. The result is owned by the caller.
    private func property(_ path: String, interface: String, name: String) throws(CredentialVaultError) -> OpaquePointer? {
        guard let reply = try callProperties(path, interface: interface, method: "Get", [interface, name]) else { return nil }
        defer { g_variant_unref(reply) }
        guard g_variant_n_children(reply) == 1, let boxed = g_variant_get_child_value(reply, 0) else {
            throw .io("the Secret Service answered something unexpected (Properties.Get)")
        }
        defer { g_variant_unref(boxed) }
        return g_variant_get_variant(boxed)
    }

    /// `Properties.GetAll`, each property given to `body`; `false` when the object does not exist.
    private func properties(
        _ path: String, interface: String, _ body: (String, OpaquePointer) -> Void
    ) throws(CredentialVaultError) -> Bool {
        guard let reply = try callProperties(path, interface: interface, method: "GetAll", [interface]) else { return false }
        defer { g_variant_unref(reply) }
        guard g_variant_n_children(reply) == 1, let dictionary = g_variant_get_child_value(reply, 0) else {
            throw .io("the Secret Service answered something unexpected (Properties.GetAll)")
        }
        defer { g_variant_unref(dictionary) }
        GVariantReading.forEachEntry(dictionary, body)
        return true
    }

    /// A `Properties` method about `interface` of the object at `path`; `nil` when the object
    /// does not exist, or was deleted while the call was on its way (`saysInterfaceGone`).
    private func callProperties(
        _ path: String, interface: String, method: String, _ arguments: [String]
    ) throws(CredentialVaultError) -> OpaquePointer? {
        do {
            return try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, path, "org.freedesktop.DBus.Properties", method,
                    GVariantReading.makeStringTuple(arguments), nil, G_DBUS_CALL_FLAGS_NONE, -1,
                    deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject || error.saysInterfaceGone(interface, at: path) { return nil }
            throw fail(error)
        }
    }

    private static func strings(_ list: PathCalls.PathList?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var index = 0
        while let entry = list[index] {
            result.append(String(cString: entry))
            index += 1
        }
        return result
    }
}
