import Testing
@testable import CredentialVault
@Test func smoke() throws { let s = InMemoryStore(); try s.save(key: "a", value: "b"); #expect(try s.load(key: "a") == "b") }
