import CredentialVault
import Foundation
import Testing

/// The name rules every backend shares: names compare by their exact UTF-8 bytes, and every
/// character but NUL is part of a name (white space, punctuation, control characters), as in
/// the Secret Service and Python keyring.
enum NameRules {
    /// Pairs of names that Swift's `String ==` calls equal (canonically equivalent) but whose
    /// bytes differ: each must be its own credential.
    static let equivalentPairs: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),  // é precomposed, e + combining acute
        ("\u{212B}ngstr\u{F6}m", "\u{C5}ngstro\u{308}m"),  // ANGSTROM SIGN vs Å, ö vs o + diaeresis
        ("\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}"),  // long s with dots, in two canonical orders
    ]

    static func exactBytes(_ store: SuiteStore, reopen: (() throws -> SuiteStore)?) async throws {
        for (index, (first, second)) in equivalentPairs.enumerated() {
            #expect(first == second, "Swift's String == calls them equal")
            #expect(!first.utf8.elementsEqual(second.utf8), "their bytes differ")
            let service = "conformance.names.\(index)"
            let byAccount = (CredentialKey(service: service, account: first), CredentialKey(service: service, account: second))
            let byService = (CredentialKey(service: service + first, account: "a"), CredentialKey(service: service + second, account: "a"))
            for (one, other) in [byAccount, byService] {
                #expect(one != other, "\(Array(one.account.utf8)) and \(Array(other.account.utf8)) are two keys")
                try await store.save(Data("one".utf8), for: one, options: store.persistentOptions)
                try await store.save(Data("other".utf8), for: other, options: store.persistentOptions)
                #expect(try await store.load(one) == Data("one".utf8), "saving the other did not replace it")
                #expect(try await store.load(other) == Data("other".utf8))
            }
            let listed = try await store.listKeys(service: service)
            #expect(listed.count == 2, "two credentials, not one: \(listed)")
            #expect(Set(listed.map { Array($0.account.utf8) }) == [Array(first.utf8), Array(second.utf8)], "listed with their exact bytes")
            #expect(try await store.listKeys(service: service + first).map { Array($0.service.utf8) } == [Array((service + first).utf8)])
            #expect(try await store.delete(byAccount.0))
            #expect(try await store.load(byAccount.1) == Data("other".utf8), "deleting one left the other")
            #expect(try await store.take(byService.1) == Data("other".utf8))
            #expect(try await store.load(byService.0) == Data("one".utf8), "taking one left the other")
            #expect(try await store.deleteAll(service: service + second) == 0, "a service filter compares bytes too")
        }
        guard let reopen else { return }
        let again = try reopen()
        for index in equivalentPairs.indices {
            let (first, second) = equivalentPairs[index]
            let service = "conformance.names.\(index)"
            #expect(try await again.load(CredentialKey(service: service, account: second)) == Data("other".utf8), "kept across a reopen")
            #expect(try await again.load(CredentialKey(service: service, account: first)) == nil)
            #expect(try await again.load(CredentialKey(service: service + first, account: "a")) == Data("one".utf8))
        }
    }

    /// Names Python keyring's own backend suite uses (`string.whitespace + string.punctuation`),
    /// every control character but NUL (C0, DEL, C1), separators and formatting characters,
    /// names that differ from another only by white space, and the empty account: each must be
    /// stored, found and listed with exactly its bytes.
    static let difficultNames: [String] = [
        " \t\n\r\u{0B}\u{0C}",
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        String(String.UnicodeScalarView((0x01...0x1F).compactMap(Unicode.Scalar.init))),
        String(String.UnicodeScalarView((0x7F...0x9F).compactMap(Unicode.Scalar.init))),
        "\u{1B}[2J\u{9B}31m", "line\nforged\tcolumn", "\u{2028}\u{2029}\u{202E}\u{200B}\u{FEFF}\u{1F511}",
        "x", "x ", " x", "a b", "a\tb", "a\u{A0}b", "\n", "\r\n", " ", "",
    ]

    /// Names are data: every name of `difficultNames` round-trips exactly as a service and as
    /// an account (save, load, metadata, listKeys, take, delete, and across a reopen), names
    /// that differ by one white-space character are two credentials, and the errors thrown
    /// about such names never carry them. Only NUL is refused, with `invalidArgument`, by
    /// every operation that takes a key; besides, a backend refuses exactly the names of
    /// `refused` (as a service or an account) with `unsupported`, storing nothing.
    static func difficultNames(_ store: SuiteStore, refused: Set<String>, reopen: (() throws -> SuiteStore)?) async throws {
        let prefix = "conformance.difficult."
        let named = difficultNames.enumerated().flatMap { index, name in
            [(name, CredentialKey(service: prefix + name, account: "a\(index)")), (name, CredentialKey(service: prefix + "accounts", account: name))]
        }
        #expect(Set(named.map(\.1)).count == named.count, "names that differ by one byte are different keys")
        #expect(refused.isSubset(of: difficultNames), "the refused names are difficult names")
        let keys = named.filter { !refused.contains($0.0) }.map(\.1)
        for (name, key) in named where refused.contains(name) {
            try await expectRefused(store, key, name: name)
        }
        for (index, key) in keys.enumerated() {
            try await store.save(Data("v\(index)".utf8), for: key, options: store.persistentOptions)
        }
        var stores = [store]
        if let reopen { stores.append(try reopen()) }
        for (copy, current) in stores.enumerated() {
            for (index, key) in keys.enumerated() {
                let what = "\(Array(key.service.utf8)) / \(Array(key.account.utf8))\(copy == 0 ? "" : " after a reopen")"
                #expect(try await current.load(key) == Data("v\(index)".utf8), "\(what): its own value")
                let stored = try await current.metadata(for: key)?.key
                #expect(stored.map { sameBytes($0, key) } == true, "\(what): metadata names it with its exact bytes")
                let listed = try await current.listKeys(service: key.service).filter { $0 == key }
                #expect(listed.count == 1 && sameBytes(listed[0], key), "\(what): listed once, with its exact bytes")
            }
        }
        let accounts = try await store.listKeys(service: prefix + "accounts").map { Array($0.account.utf8) }
        #expect(
            Set(accounts) == Set(difficultNames.filter { !refused.contains($0) }.map { Array($0.utf8) }),
            "one credential for each account name it accepted")

        try await nulIsRefused(store, service: prefix)
        // Errors about such names (here: options a backend refuses) never repeat them.
        for key in keys.prefix(8) {
            do {
                try await store.save(Data("x".utf8), for: key, options: .ephemeral(ttl: .zero))
                Issue.record("a zero TTL was accepted")
            } catch {
                #expect(!CredentialKey.hasControlCharacter(String(describing: error)), "\(error)")
                #expect(!String(describing: error).contains(prefix), "the error does not repeat the name")
            }
        }
        for (index, key) in keys.enumerated() {
            if index.isMultiple(of: 2) {
                #expect(try await store.take(key) == Data("v\(index)".utf8))
            } else {
                #expect(try await store.delete(key))
            }
            #expect(try await store.load(key) == nil)
        }
        let left = try await store.listKeys().filter { $0.service.utf8.starts(with: prefix.utf8) }
        #expect(left.isEmpty, "each take and delete removed its own credential only: \(left.count) left")
    }

    /// A save of `key` (which holds `name`) is refused with `unsupported`, whose message neither
    /// carries a control character nor repeats the name raw, and nothing is stored under it.
    private static func expectRefused(_ store: SuiteStore, _ key: CredentialKey, name: String) async throws {
        let what = "\(Array(key.service.utf8)) / \(Array(key.account.utf8))"
        do throws(CredentialVaultError) {
            try await store.save(Data("refused".utf8), for: key, options: store.persistentOptions)
            Issue.record("\(what): accepted, but the backend says it refuses this name")
        } catch {
            if case .unsupported(let why) = error {
                #expect(!CredentialKey.hasControlCharacter(why), "\(what): the message escapes the name: \(why)")
                #expect(name.isEmpty || !why.contains(name), "\(what): never the raw name: \(why)")
            } else {
                Issue.record("\(what): \(error), not unsupported")
            }
        }
        #expect(try await store.load(key) == nil, "\(what): nothing stored")
        #expect(try await store.listKeys(service: key.service).filter { $0 == key }.isEmpty, "\(what): nothing listed")
    }

    /// A NUL in the service, the account or the label: `invalidArgument` from every operation
    /// that takes a key, without the name in the message, and nothing stored.
    private static func nulIsRefused(_ store: SuiteStore, service: String) async throws {
        let keys = [
            CredentialKey(service: service + "nul\u{0}x", account: "a"), CredentialKey(service: service + "nul", account: "a\u{0}"),
            CredentialKey(service: service + "nul", account: "a", label: "label\u{0}"),
        ]
        for key in keys {
            await expectInvalid("save") { try await store.save(Data("v".utf8), for: key, options: store.persistentOptions) }
            guard key.label == nil else { continue }
            await expectInvalid("load") { _ = try await store.load(key) }
            await expectInvalid("take") { _ = try await store.take(key) }
            await expectInvalid("delete") { _ = try await store.delete(key) }
            await expectInvalid("metadata") { _ = try await store.metadata(for: key) }
        }
        #expect(try await store.listKeys(service: service + "nul").isEmpty, "nothing was stored")
    }

    private static func sameBytes(_ one: CredentialKey, _ other: CredentialKey) -> Bool {
        one.service.utf8.elementsEqual(other.service.utf8) && one.account.utf8.elementsEqual(other.account.utf8)
    }

    private static func expectInvalid(_ what: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("\(what): accepted")
        } catch let error as CredentialVaultError {
            guard case .invalidArgument(let why) = error else {
                Issue.record("\(what): \(error), not invalidArgument")
                return
            }
            #expect(!why.contains("conformance."), "\(what): the message does not repeat the name")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }
}
