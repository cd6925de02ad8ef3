import CredentialVault
import Foundation
import Testing

/// The name rules every backend shares: names compare by their exact
/// UTF-8 bytes, and control characters (C0, DEL, C1) in a service or account are refused with
/// `invalidArgument` by every operation that takes a key.
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

    /// One of each kind: NUL, other C0 (TAB, LF, CR, ESC, US), DEL, C1 (U+0080, NEL, CSI, U+009F).
    static let controlCharacters: [Character] = ["\u{0}", "\u{1}", "\t", "\n", "\r", "\u{1B}", "\u{1F}", "\u{7F}", "\u{80}", "\u{85}", "\u{9B}", "\u{9F}"]

    static func controlCharacters(_ store: SuiteStore) async throws {
        for character in controlCharacters {
            let code = character.unicodeScalars.first!.value
            for key in [
                CredentialKey(service: "conformance.ctl\(character)x", account: "a"),
                CredentialKey(service: "conformance.ctl", account: "a\(character)"),
            ] {
                await expectInvalid("save U+\(String(code, radix: 16))") { try await store.save(Data("v".utf8), for: key, options: store.persistentOptions) }
                await expectInvalid("load U+\(String(code, radix: 16))") { _ = try await store.load(key) }
                await expectInvalid("take U+\(String(code, radix: 16))") { _ = try await store.take(key) }
                await expectInvalid("delete U+\(String(code, radix: 16))") { _ = try await store.delete(key) }
                await expectInvalid("metadata U+\(String(code, radix: 16))") { _ = try await store.metadata(for: key) }
            }
        }
        #expect(try await store.listKeys().filter { $0.service.hasPrefix("conformance.ctl") }.isEmpty, "nothing was stored")
        // The first printable characters after each range, and other non-control spaces, are names.
        let fine = CredentialKey(service: "conformance.ctl \u{A0}\u{2028}~", account: "\u{A1} a")
        try await store.save(Data("v".utf8), for: fine, options: store.persistentOptions)
        #expect(try await store.load(fine) == Data("v".utf8))
        #expect(try await store.delete(fine))
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
            #expect(!why.contains("conformance.ctl"), "\(what): the message does not repeat the name")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }
}
