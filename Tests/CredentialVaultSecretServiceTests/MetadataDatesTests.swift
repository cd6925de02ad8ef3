import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// `CredentialMetadata`'s dates from a real gnome-keyring-daemon: created and modified are the
/// item's `Created` and `Modified` properties (whole seconds, by the daemon's clock, so each is
/// checked to lie between the test's own clock read before and after the write); the expiry of
/// an ephemeral credential is the store's, by its injected clock, exact to the millisecond. A
/// write that makes a new item is seen as a new item path, never by waiting for the clock.
@Suite(.ownThread, .privateKeyring)
struct SecretServiceMetadataDatesTests {
    /// Now, rounded down to the second, as the daemon records it.
    private static func wholeSecondNow() -> Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

    /// Runs `write` and returns the daemon time range it must fall in: from the second it began
    /// in to the moment it ended.
    private static func during(_ write: () throws -> Void) rethrows -> ClosedRange<Date> {
        let before = wholeSecondNow()
        try write()
        return before...Date()
    }

    @Test func aSaveKeepsCreatedAndMovesModified() async throws {
        try await offThePool {
            let fixture = IsolatedSecretServiceStore()
            let key = CredentialKey(service: "dates", account: "alice")
            let firstSave = try Self.during { try fixture.store.save(Data("1".utf8), for: key, options: .portable) }
            let first = try #require(try fixture.store.metadata(for: key))
            let created = try #require(first.created)
            #expect(firstSave.contains(created), "the daemon's time of the save")
            // gnome-keyring stamps a new item's creation and its first modification separately, in
            // whole seconds: on a busy machine they can fall in two seconds, both within the save.
            let firstModified = try #require(first.modified)
            #expect(firstSave.contains(firstModified) && firstModified >= created && first.expiresAt == nil)
            let item = try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store)

            // Replaced in place (the same attributes): the same item, which keeps its creation time;
            // its modification time is the second save's.
            let secondSave = try Self.during { try fixture.store.save(Data("2".utf8), for: key, options: .portable) }
            #expect(try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store) == item, "replaced in place")
            let second = try #require(try fixture.store.metadata(for: key))
            #expect(second.created == created)
            let modified = try #require(second.modified)
            #expect(secondSave.contains(modified) && modified >= created)
            // Another store (another process, as far as the daemon is concerned) reads the same.
            #expect(try SecretServiceStore(configuration: fixture.store.configuration).metadata(for: key) == second)
        }
    }

    /// A save with another accessibility writes a new item (the replace matches the attributes,
    /// the accessibility among them) and deletes the old one: the daemon's creation time starts
    /// again, as `CredentialMetadata` documents.
    @Test func aSaveWithAnotherAccessibilityStartsCreatedAgain() async throws {
        try await offThePool {
            let fixture = IsolatedSecretServiceStore()
            let key = CredentialKey(service: "dates", account: "carol")
            try fixture.store.save(Data("1".utf8), for: key, options: .portable)
            let item = try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store)
            let again = try Self.during { try fixture.store.save(Data("2".utf8), for: key, options: .default) }
            let replacement = try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store)
            #expect(replacement.count == 1 && replacement != item, "a new item replaced the old one: \(item) -> \(replacement)")
            let metadata = try #require(try fixture.store.metadata(for: key))
            #expect(metadata.accessibility == .deviceOnly)
            let created = try #require(metadata.created)
            #expect(again.contains(created) && metadata.modified == created, "the new item's creation is the second save's")
        }
    }

    @Test func anEphemeralCredentialReportsItsExpiryByTheStoresClock() async throws {
        try await offThePool {
            let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000.125))
            let fixture = IsolatedSecretServiceStore(clock: clock)
            let key = CredentialKey(service: "dates", account: "nonce")
            let saved = try Self.during { try fixture.store.save(Data("n".utf8), for: key, options: .ephemeral(ttl: .seconds(90))) }
            let metadata = try #require(try fixture.store.metadata(for: key))
            #expect(metadata.isEphemeral && metadata.expiresAt == clock.now().addingTimeInterval(90))
            // The item's times are the daemon's (the real clock), not the injected one.
            let created = try #require(metadata.created)
            #expect(saved.contains(created) && metadata.modified == created)
            // Saved again: a new item in `session` (its expiry never matches the old one's), so
            // the daemon's creation time starts again, as `CredentialMetadata` documents.
            let item = try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store)
            let savedAgain = try Self.during { try fixture.store.save(Data("n".utf8), for: key, options: .ephemeral(ttl: .seconds(30))) }
            let replacement = try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store)
            #expect(replacement.count == 1 && replacement != item, "a new item replaced the old one: \(item) -> \(replacement)")
            let again = try #require(try fixture.store.metadata(for: key))
            #expect(try savedAgain.contains(#require(again.created)) && again.expiresAt == clock.now().addingTimeInterval(30))
        }
    }

    /// Items `secret-tool` wrote have the daemon's times too.
    @Test func anotherToolsItemHasTheDaemonsTimes() async throws {
        try await offThePool {
            let fixture = IsolatedSecretServiceStore()
            let stored = try Self.during {
                try SecretTool.store(service: fixture.prefix + "dates", account: "bob", label: "bob", value: Data("v".utf8))
            }
            let metadata = try #require(try fixture.store.metadata(for: CredentialKey(service: "dates", account: "bob")))
            let created = try #require(metadata.created)
            let modified = try #require(metadata.modified)
            // secret-tool creates the item, then may change it: both times fall within its run.
            #expect(stored.contains(created) && stored.contains(modified) && modified >= created, "\(created), \(modified) in \(stored)")
            #expect(metadata.expiresAt == nil)
        }
    }
}
