import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// `CredentialMetadata`'s dates from a real gnome-keyring-daemon: created and modified are the
/// item's `Created` and `Modified` properties (whole seconds, by the daemon's clock, so they
/// are checked against the test's own clock to the second); the expiry of an ephemeral
/// credential is the store's, by its injected clock, exact to the millisecond.
@Suite(.privateKeyring)
struct SecretServiceMetadataDatesTests {
    /// Now, rounded down to the second, as the daemon records it.
    private static func wholeSecondNow() -> Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

    /// Sleeps until the wall clock's second has changed, so that the daemon's next time differs.
    private static func waitForTheNextSecond() {
        let second = wholeSecondNow()
        while wholeSecondNow() == second { usleep(20_000) }
    }

    @Test func aSaveKeepsCreatedAndMovesModified() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "dates", account: "alice")
        let before = Self.wholeSecondNow()
        try fixture.store.save(Data("1".utf8), for: key, options: .portable)
        let first = try #require(try fixture.store.metadata(for: key))
        let created = try #require(first.created)
        #expect(created >= before && created <= Date(), "the daemon's time of the save")
        #expect(first.modified == created && first.expiresAt == nil)

        Self.waitForTheNextSecond()
        // Replaced in place (the same attributes): the item keeps its creation time.
        try fixture.store.save(Data("2".utf8), for: key, options: .portable)
        let second = try #require(try fixture.store.metadata(for: key))
        #expect(second.created == created)
        let modified = try #require(second.modified)
        #expect(modified > created && modified <= Date())
        // Another store (another process, as far as the daemon is concerned) reads the same.
        #expect(try SecretServiceStore(configuration: fixture.store.configuration).metadata(for: key) == second)
    }

    /// A save with another accessibility writes a new item (the replace matches the attributes,
    /// the accessibility among them) and deletes the old one: the daemon's creation time starts
    /// again, as `CredentialMetadata` documents.
    @Test func aSaveWithAnotherAccessibilityStartsCreatedAgain() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "dates", account: "carol")
        try fixture.store.save(Data("1".utf8), for: key, options: .portable)
        let created = try #require(try fixture.store.metadata(for: key)?.created)
        Self.waitForTheNextSecond()
        try fixture.store.save(Data("2".utf8), for: key, options: .default)
        let metadata = try #require(try fixture.store.metadata(for: key))
        #expect(metadata.accessibility == .deviceOnly)
        #expect(try #require(metadata.created) > created && metadata.modified == metadata.created)
    }

    @Test func anEphemeralCredentialReportsItsExpiryByTheStoresClock() throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000.125))
        let fixture = IsolatedSecretServiceStore(clock: clock)
        let key = CredentialKey(service: "dates", account: "nonce")
        let before = Self.wholeSecondNow()
        try fixture.store.save(Data("n".utf8), for: key, options: .ephemeral(ttl: .seconds(90)))
        let metadata = try #require(try fixture.store.metadata(for: key))
        #expect(metadata.isEphemeral && metadata.expiresAt == clock.now().addingTimeInterval(90))
        // The item's times are the daemon's (the real clock), not the injected one.
        let created = try #require(metadata.created)
        #expect(created >= before && created <= Date() && metadata.modified == created)
        // Saved again: a new item in `session` (its expiry never matches the old one's), so
        // the daemon's creation time starts again, as `CredentialMetadata` documents.
        Self.waitForTheNextSecond()
        try fixture.store.save(Data("n".utf8), for: key, options: .ephemeral(ttl: .seconds(30)))
        let again = try #require(try fixture.store.metadata(for: key))
        #expect(try #require(again.created) > created && again.expiresAt == clock.now().addingTimeInterval(30))
    }

    /// Items `secret-tool` wrote have the daemon's times too.
    @Test func anotherToolsItemHasTheDaemonsTimes() throws {
        let fixture = IsolatedSecretServiceStore()
        let before = Self.wholeSecondNow()
        try SecretTool.store(service: fixture.prefix + "dates", account: "bob", label: "bob", value: Data("v".utf8))
        let metadata = try #require(try fixture.store.metadata(for: CredentialKey(service: "dates", account: "bob")))
        let created = try #require(metadata.created)
        #expect(created >= before && created <= Date() && metadata.modified == created && metadata.expiresAt == nil)
    }
}
