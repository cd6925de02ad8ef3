import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// Secrets of every shape and files of many items cross between this store and Debian's
/// `secret-tool` unchanged: bytes that are not UTF-8, NUL bytes, empty secrets, the largest
/// secret `secret-tool` takes on its input, and dozens of items written by either side.
@Suite(.ownThread) struct LibsecretFileSecretShapeTests {
    static let shapes: [(account: String, secret: [UInt8])] = [
        ("not-utf8", [0xFF, 0xFE, 0x00, 0x61, 0x80, 0x00]), ("empty", []),
        // secret-tool reads at most 8 KiB from its input.
        ("eight-kib", (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }.map { $0 == 0x0A ? 0x0B : $0 }),
    ]

    @Test func secretsSecretToolStoresAreReadHereByteForByte() async throws {
        let file = SecretToolFile()
        for (account, secret) in Self.shapes {
            let stored = try await file.run(
                ["store", "--label=\(account) label", "service", "shapes.example", "username", account, "extra", "attribute"], stdin: Data(secret))
            #expect(stored.status == 0, "\(stored.err)")
        }
        let store = try file.store()
        for (account, secret) in Self.shapes {
            let key = CredentialKey(service: "shapes.example", account: account)
            #expect(try store.synchronous.load(key) == Data(secret), "\(account)")
        }
        #expect(try store.synchronous.listKeys(service: "shapes.example").count == Self.shapes.count)
    }

    @Test func secretsSavedHereAreReadBySecretToolByteForByte() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        let large = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        for (account, secret) in Self.shapes + [("one-mib", large)] {
            try store.synchronous.save(Data(secret), for: CredentialKey(service: "shapes.example", account: account))
            #expect(try await file.lookupBytes(["service": "shapes.example", "username": account]) == secret, "\(account)")
        }
    }

    @Test func dozensOfItemsFromEitherSideAreAllSeenByTheOther() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        for index in 0..<30 {
            #expect(try await file.store("theirs \(index)", attributes: ["service": "many.example", "username": "theirs-\(index)"]))
            try store.synchronous.save(Data("ours \(index)".utf8), for: CredentialKey(service: "many.example", account: "ours-\(index)"))
        }
        #expect(try store.synchronous.listKeys(service: "many.example").count == 60)
        #expect(try await file.search(["service": "many.example"]).count == 60)
        for index in [0, 17, 29] {
            #expect(try store.synchronous.load(CredentialKey(service: "many.example", account: "theirs-\(index)")) == Data("theirs \(index)".utf8))
            #expect(try await file.lookup(["service": "many.example", "username": "ours-\(index)"]) == "ours \(index)")
        }
    }
}
