import CredentialVault
import Foundation

/// A keyring file's contents with the key that opens them: finds items by their attributes
/// (comparing HMACs, as libsecret searches), decrypts them, and adds and removes items.
struct OpenedKeyring {
    /// The file's contents, changed in place by a write before it is serialised.
    var contents: KeyringFileContents
    /// The key of `contents`' salt and iteration count.
    let key: KeyringKey

    /// Opens `contents` with `key`, checking the key first: when the file has items and the MAC
    /// of none of them verifies, the key is not this file's (`wrongPassphrase`), which would
    /// otherwise look like an empty keyring (no attribute HMAC would match). An empty file
    /// cannot tell a wrong key (a weakness of the format).
    init(_ contents: KeyringFileContents, key: KeyringKey) throws(CredentialVaultError) {
        self.contents = contents
        self.key = key
        guard !contents.items.isEmpty else { return }
        for item in contents.items where try Self.macVerifies(item, key: key) { return }
        throw .wrongPassphrase
    }

    private static func macVerifies(_ item: EncryptedItem, key: KeyringKey) throws(CredentialVaultError) -> Bool {
        let macStart = item.blob.count - KeyringFileLayout.macSize
        return try item.blob.withRawBytes { (blob) throws(CredentialVaultError) in
            try KeyringMAC.verify(UnsafeRawBufferPointer(rebasing: blob[..<macStart]), key: key, expected: Array(blob[macStart...]))
        }
    }

    /// The indices of the items whose attributes include every one of `query` (name present,
    /// HMAC of the value equal, in constant time): libsecret's search. An item may have more
    /// attributes (oo7's `xdg:content-type`, libsecret's `xdg:schema`).
    func indices(matching query: [String: String]) throws(CredentialVaultError) -> [Int] {
        var macs: [(String, [UInt8])] = []
        for (name, value) in query { macs.append((name, try KeyringMAC.compute(value: value, key: key))) }
        return contents.items.indices.filter { index in
            macs.allSatisfy { name, mac in contents.items[index].mac(of: name).map { constantTimeEquals($0, mac) } ?? false }
        }
    }

    /// The item at `index`, verified and decrypted (`ItemSealing.open`: `tampered` when its MAC
    /// or attributes do not match).
    func decrypt(_ index: Int) throws(CredentialVaultError) -> KeyringItem {
        Self.decryptions?.count.add(1, ordering: .relaxed)
        return try ItemSealing.open(contents.items[index], key: key)
    }

    /// For tests: counts the items decrypted in this task.
    @TaskLocal static var decryptions: DecryptionCount?

    /// The credentials of this store's namespace among the items matching `query`, decrypted.
    ///
    /// An exact copy of an item already decrypted is not decrypted again but recorded as one of
    /// its copies: whoever can write the file (without its key) could otherwise copy one valid
    /// item 100,000 times into it and make every lookup decrypt each copy (measured: 16 s and
    /// 680 MiB of guarded memory per `load`).
    func credentials(matching query: [String: String], naming: CredentialNaming) throws(CredentialVaultError) -> [FileCredential] {
        var found: [FileCredential] = []
        // An item's bytes -> its credential's position in `found` (nil: not one of this store's).
        var firstCopy: [[UInt8]: Int?] = [:]
        for index in try indices(matching: query) {
            let identity = contents.items[index].identity
            if let seen = firstCopy[identity] {
                if let position = seen { found[position].copies.append(index) }
                continue
            }
            var item = try decrypt(index)
            guard let credential = FileCredential(item, at: index, naming: naming) else {
                item.wipeSecret()
                firstCopy[identity] = .some(nil)
                continue
            }
            firstCopy[identity] = found.count
            found.append(credential)
        }
        return found
    }

    /// Encrypts `item` and appends it (the newest item).
    mutating func append(_ item: KeyringItem) throws(CredentialVaultError) {
        contents.items.append(try ItemSealing.seal(item, key: key))
    }

    /// Removes the items at `indices`.
    mutating func remove(_ indices: some Sequence<Int>) {
        let doomed = Set(indices)
        contents.items = contents.items.enumerated().filter { !doomed.contains($0.offset) }.map(\.element)
    }

    /// The indices of this namespace's ephemeral items expired at `now` (expiry names are in
    /// clear, so only those items are decrypted).
    func expired(at now: Date, naming: CredentialNaming) throws(CredentialVaultError) -> [Int] {
        var expired: [Int] = []
        // An exact copy shares its first's answer (see `credentials(matching:naming:)`).
        var answer: [[UInt8]: Bool] = [:]
        for index in contents.items.indices where contents.items[index].has(attribute: ItemAttribute.expires) {
            let identity = contents.items[index].identity
            if let known = answer[identity] {
                if known { expired.append(index) }
                continue
            }
            var item = try decrypt(index)
            defer { item.wipeSecret() }
            let isExpired = FileCredential(item, at: index, naming: naming)?.stored.isExpired(at: now) ?? false
            answer[identity] = isExpired
            if isExpired { expired.append(index) }
        }
        return expired
    }
}
