#if Configuration
import Configuration
import CredentialVault
import CredentialVaultConfiguration
import CredentialVaultTestSupport
import Testing

/// The documented rule from configuration keys to credential names, and back.
@Suite struct KeyMappingTests {
    let mapping = try! VaultConfigKeyMapping(service: "api.example.com", prefix: "config/")

    @Test func aKeyIsThePrefixAndItsComponentsJoinedWithDots() {
        #expect(mapping.credentialKey(for: AbsoluteConfigKey(ConfigKey("db.password"))) == CredentialKey(service: "api.example.com", account: "config/db.password"))
        #expect(mapping.account(for: AbsoluteConfigKey(["http", "client", "token"])) == "config/http.client.token")
        let bare = try! VaultConfigKeyMapping(service: "api.example.com")
        #expect(bare.account(for: AbsoluteConfigKey(["db", "password"])) == "db.password")
    }

    @Test func keysTheRuleCannotRepresentNameNoCredential() {
        // A component holding the separator would collide with two components: never mapped.
        #expect(mapping.account(for: AbsoluteConfigKey(["db.password"])) == nil)
        #expect(mapping.account(for: AbsoluteConfigKey(["db", ""])) == nil)
        #expect(mapping.account(for: AbsoluteConfigKey([])) == nil)
        #expect(mapping.account(for: AbsoluteConfigKey(["a\u{0}b"])) == nil)
        #expect(mapping.account(for: AbsoluteConfigKey([String(repeating: "x", count: 4096 - 7)])) == "config/" + String(repeating: "x", count: 4089))
        #expect(mapping.account(for: AbsoluteConfigKey([String(repeating: "x", count: 4096 - 6)])) == nil, "past 4096 bytes")
    }

    @Test func credentialsInvertToTheirKeysAndOthersAreNotConfiguration() {
        #expect(mapping.configKey(for: CredentialKey(service: "api.example.com", account: "config/db.password"))?.components == ["db", "password"])
        for account in ["config/", "config/db..password", "config/.db", "config/db.", "other/db.password", "configdb.password", "db.password"] {
            #expect(mapping.configKey(for: CredentialKey(service: "api.example.com", account: account)) == nil, "\(account)")
        }
        #expect(mapping.configKey(for: CredentialKey(service: "other.example.com", account: "config/db.password")) == nil)
        // By bytes: a decomposed "é" in the prefix is another prefix.
        let composed = try! VaultConfigKeyMapping(service: "s", prefix: "caf\u{E9}/")
        #expect(composed.configKey(for: CredentialKey(service: "s", account: "cafe\u{301}/x")) == nil)
        #expect(composed.configKey(for: CredentialKey(service: "s", account: "caf\u{E9}/x"))?.components == ["x"])
    }

    @Test(arguments: ["a", "a.b", "ключ.значение", "x.y.z", "tab\t.ctl\u{1B}"])
    func theRuleRoundTrips(key: String) throws {
        let credential = try #require(mapping.credentialKey(for: AbsoluteConfigKey(ConfigKey(key))))
        #expect(mapping.configKey(for: credential)?.components == ConfigKey(key).components)
    }

    @Test func aMappingRefusesAServiceNoCredentialCanHave() {
        expectThrows(\CredentialVaultError.isInvalidArgument) { try VaultConfigKeyMapping(service: "") }
        expectThrows(\CredentialVaultError.isInvalidArgument) { try VaultConfigKeyMapping(service: "s", prefix: "a\u{0}") }
        #expect(!"\(mapping)".contains("api.example.com") && !"\(mapping)".contains("config/"), "names are not printed")
    }
}
#endif
