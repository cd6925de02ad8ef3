import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The public seal/open, guarded memory and the arena behind the in-memory store.
@Suite(.ownThread) struct CryptoTests {
    @Test(arguments: [0, 1, 32, 4096, 1 << 20])
    func sealingKeyRoundTrips(size: Int) throws {
        let key = SealingKey.random()
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
        let box = key.seal(plaintext, associatedData: Data("ad".utf8))
        #expect(box.count == size + SealingKey.overhead)
        #expect(try key.open(box, associatedData: Data("ad".utf8)) == plaintext)
        #expect(key.seal(plaintext) != key.seal(plaintext), "fresh nonce every time")
    }

    @Test func sealingKeyDetectsTamperingWrongKeyAndWrongAssociatedData() throws {
        let key = SealingKey.random()
        let box = key.seal(Data("message".utf8), associatedData: Data("ad".utf8))
        for i in 0..<box.count {
            var damaged = box
            damaged[i] ^= 0x01
            #expect(throws: CredentialVaultError.tampered) { try key.open(damaged, associatedData: Data("ad".utf8)) }
        }
        #expect(throws: CredentialVaultError.tampered) { try key.open(box, associatedData: Data("other".utf8)) }
        #expect(throws: CredentialVaultError.tampered) { try SealingKey.random().open(box, associatedData: Data("ad".utf8)) }
        expectThrows(\CredentialVaultError.isCorrupted) { try key.open(Data(count: 10)) }
    }

    @Test func secureBytesCompareInConstantTimeAndRedact() {
        let a = SecureBytes(copying: [1, 2, 3]), b = SecureBytes(copying: [1, 2, 3]), c = SecureBytes(copying: [1, 2, 4])
        #expect(a.constantTimeEquals(b))
        #expect(!a.constantTimeEquals(c))
        #expect(!a.constantTimeEquals(SecureBytes(copying: [1, 2])))
        #expect(constantTimeEquals(Data([9, 9]), Data([9, 9])))
        #expect("\(a)" == "SecureBytes(3 bytes, redacted)")
    }

    @Test func inMemoryStoreKeepsValuesExactAcrossArenaCompactions() throws {
        let store = InMemoryStore()
        var expected: [CredentialKey: Data] = [:]
        for round in 0..<3000 {
            let key = CredentialKey(service: "arena", account: "\(round % 700)")
            if round % 5 == 4 {
                try store.delete(key)
                expected[key] = nil
            } else {
                let value = Data(repeating: UInt8(truncatingIfNeeded: round), count: (round * 37) % 3000)
                try store.save(value, for: key, options: .default)
                expected[key] = value
            }
        }
        for (key, value) in expected { #expect(try store.load(key) == value) }
        #expect(try store.listKeys(service: "arena").count == expected.count)
    }
}
