import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Names on the command line and in listings (the library's rules are in the conformance suite,
/// `NameRules`): arguments that are not UTF-8 are refused, not replaced; names are data, control
/// characters included, and are escaped wherever a name is printed; names stored by older
/// versions stay readable, listable and deletable.
@Suite(.ownThread) final class NameRuleTests {
    let dir = TempDirectory()

    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir), stdin: stdin)
    }

    func credvault(raw arguments: [[UInt8]], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(rawArguments: arguments, environment: CLIChild.environment(dir), stdin: stdin)
    }

    @Test func argumentsThatAreNotUTF8AreRefusedNotReplaced() throws {
        // A real name holding U+FFFD, which a replaced \xFF or \xFE used to reach.
        #expect(try credvault(["store", "svc\u{FFFD}", "acct", "--portable"], stdin: Data("real".utf8)).status == 0)
        for bad: UInt8 in [0xFF, 0xFE, 0xC3] {
            let service = Array("svc".utf8) + [bad]
            for arguments in [
                [Array("lookup".utf8), service, Array("acct".utf8)], [Array("store".utf8), service, Array("acct".utf8)],
                [Array("delete".utf8), Array("svc".utf8), Array("acct".utf8) + [bad]],
                [Array("list".utf8), Array("--vault".utf8), Array("/tmp/x".utf8) + [bad]],
            ] {
                let outcome = try credvault(raw: arguments, stdin: Data("other".utf8))
                #expect(outcome.status == 2, "\(arguments): \(outcome.status) \(outcome.stderr)")
                #expect(outcome.stderr.contains("is not valid UTF-8"), "\(outcome.stderr)")
                #expect(outcome.stdout.isEmpty, "nothing read or written")
            }
        }
        let listed = try credvault(["list"])
        #expect(String(decoding: listed.stdout, as: UTF8.self) == "svc\u{FFFD}\tacct\n", "only the real name")
        #expect(try credvault(["lookup", "svc\u{FFFD}", "acct"]).stdout == Data("real".utf8))
    }

    @Test func controlCharactersInNamesAreStoredAndNeverReachTheTerminal() throws {
        let names = ["a\tb", "a\nb", "\u{1B}[2Jred", "x\u{7F}", "x\u{9B}31m", " padded ", "-h"]
        for (index, name) in names.enumerated() {
            for (service, account) in [(name, "acct"), ("svc", name)] {
                let stored = try credvault(["store", "--", service, account], stdin: Data("v\(index)".utf8))
                #expect(stored.status == 0, "\(name.debugDescription): \(stored.stderr)")
                #expect(try credvault(["lookup", "--", service, account]).stdout == Data("v\(index)".utf8))
            }
        }
        let listed = String(decoding: try credvault(["list"]).stdout, as: UTF8.self)
        #expect(listed.split(separator: "\n").count == names.count * 2, "one line per credential: \(listed.debugDescription)")
        #expect(listed.contains("svc\ta\\x09b\n") && listed.contains("\\x1B[2Jred\tacct\n") && listed.contains("x\\x9B31m\tacct\n"))
        #expect(!listed.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x7F }, "no escape reaches stdout")
        let json = try credvault(["list", "--json"])
        #expect(!json.stdout.contains(0x1B) && !String(decoding: json.stdout, as: UTF8.self).unicodeScalars.contains { $0.value == 0x9B })
        let items = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: String]])
        #expect(Set(items.compactMap { $0["account"] }.map { Array($0.utf8) }).isSuperset(of: names.map { Array($0.utf8) }), "JSON has the exact names")

        // Errors that name a credential escape it too, and stay one line.
        let missing = try credvault(["lookup", "--", "\u{1B}[2Jgone\nforged", "acct"])
        #expect(missing.status == 1)
        #expect(!missing.stderr.unicodeScalars.contains { $0.value == 0x1B } && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        for (service, account) in [(names[0], "acct"), ("svc", names[2])] {
            #expect(try credvault(["delete", "--", service, account]).status == 0)
            #expect(try credvault(["lookup", "--", service, account]).status == 1)
        }
        let unknown = try credvault(["frob\u{1B}[2J"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown command 'frob\\x1B[2J'"), "\(unknown.stderr)")
    }

    @Test func controlCharactersInNamesFromAnotherWriterStayReachableAndAreListedEscaped() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let forged = CredentialKey(service: "svc\tforged\nline", account: "acct\u{1B}[2J")
        let other = CredentialKey(service: "svc\u{85}", account: "a")
        // As another writer of the format may (it allows them): straight into the record table.
        for (key, value) in [(forged, "legacy"), (other, "other")] {
            try store.mutate { (s) throws(CredentialVaultError) in
                s.contents.records[key] = RecordCodec.seal(
                    key: key, value: Data(value.utf8), accessibility: .portable, expiresAtMillis: 0,
                    vaultID: s.contents.header.vaultID, keys: s.keys, deviceKey: nil, times: RecordTimes(createdMillis: 1, modifiedMillis: 1))
            }
        }
        try store.save(Data("n".utf8), for: CredentialKey(service: "normal", account: "acct"), options: .portable)

        let vault = ["--vault", store.url.path, "--key-file", keyFile.path]
        let listed = try credvault(["list"] + vault)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            String(decoding: listed.stdout, as: UTF8.self) == "normal\tacct\nsvc\\x09forged\\x0Aline\tacct\\x1B[2J\nsvc\\x85\ta\n",
            "one line per credential, control characters escaped")
        let json = try credvault(["list", "--json"] + vault)
        #expect(!json.stdout.contains(0x1B), "JSON escapes them too")
        let items = try JSONSerialization.jsonObject(with: json.stdout) as? [[String: String]]
        #expect(items?.contains { $0["service"].map { CredentialKey.sameName($0, forged.service) } ?? false } == true, "JSON has the exact name")

        // The vault opens; the stored names are listed with their exact bytes and reachable
        // through the listed keys and through keys a caller builds with the same names.
        let again = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        let keys = try again.listKeys()
        let legacy = try #require(keys.first { $0 == forged })
        #expect(Array(legacy.service.utf8) == Array(forged.service.utf8) && Array(legacy.account.utf8) == Array(forged.account.utf8))
        #expect(try again.load(legacy) == Data("legacy".utf8))
        #expect(try again.metadata(for: legacy)?.accessibility == .portable)
        #expect(try again.load(forged) == Data("legacy".utf8))
        try again.save(Data("x".utf8), for: CredentialKey(service: "svc\u{85}", account: "new"), options: .portable)
        #expect(try again.delete(CredentialKey(service: "svc\u{85}", account: "new")))
        #expect(try again.take(legacy) == Data("legacy".utf8))
        let otherListed = try #require(try again.listKeys().first { $0 == other })
        #expect(try again.delete(otherListed))
        #expect(try again.listKeys().map(\.service) == ["normal"])
    }
}
