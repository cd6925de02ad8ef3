#if Configuration
import Configuration
import CredentialVault
import CredentialVaultConfiguration
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

/// Watchers of a provider that reloads concurrently (the poll loop and a `fetchValue`, say): the
/// last snapshot a watcher hears of is the provider's current one. Each reload's notices are
/// sent in the order its snapshot became current; a watcher that heard an older reload's
/// snapshot after a newer one's would keep values the store no longer holds (a rotated
/// password going back to the old one) until something else changes. (On the shared pool, not
/// `.ownThread`: the second reload must run while the first is still telling its watchers.)
@Suite("configuration provider watcher order")
struct WatcherOrderTests {
    /// How many value watchers the first reload tells before it reaches the snapshot watcher:
    /// the time it takes is the window in which a second reload can publish.
    static let crowd = 20_000

    @Test("a snapshot watcher's last snapshot is the current one after two concurrent reloads")
    func snapshotWatcherEndsOnTheCurrentSnapshot() async throws {
        let store = InMemoryStore()
        try await store.put("db.password", "old-password")
        try await store.put("api.token", "old-token")
        let provider = try await VaultConfigProvider(store: store, mapping: ConfigTestVault.mapping())
        let password = AbsoluteConfigKey(ConfigKey("db.password"))
        let token = AbsoluteConfigKey(ConfigKey("api.token"))

        let registered = Arrivals()
        let secondReloadDone = Arrivals()
        let release = Task { try? await Task.sleep(for: .seconds(600)) }
        let secondStarted = Latch()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Many watchers of the password that never read: only the first reload tells them.
            for _ in 0..<Self.crowd {
                group.addTask {
                    try await provider.watchValue(forKey: password, type: .string) { _ in
                        registered.arrive()
                        await release.value
                    }
                }
            }
            // A few watchers that start the second reload as soon as the first one's notices
            // reach them (the token rotated meanwhile): the first is then still telling the crowd.
            for _ in 0..<8 {
                group.addTask {
                    try await provider.watchValue(forKey: password, type: .string) { updates in
                        registered.arrive()
                        for await update in updates {
                            guard case .string("new-password")? = (try? update.get())?.value?.content else { continue }
                            if secondStarted.first() {
                                try? await store.put("api.token", "new-token")
                                try? await provider.reload()
                                secondReloadDone.arrive()
                            }
                            break
                        }
                        await release.value
                    }
                }
            }
            // The watcher checked: it reads the newest snapshot it was sent once both reloads ended.
            let checked = Checked()
            let checkNow = Arrivals()
            group.addTask {
                try await provider.watchSnapshot { updates in
                    registered.arrive()
                    _ = await checkNow.reached(1)
                    for await snapshot in updates {
                        let value = try? snapshot.value(forKey: token, type: .string).value?.content
                        if case .string(let text)? = value { checked.set(text) }
                        break
                    }
                }
            }
            #expect(await registered.reached(Self.crowd + 9), "every watcher registered")

            try await store.put("db.password", "new-password")
            try await provider.reload()
            #expect(await secondReloadDone.reached(1), "the second reload ran")
            let current = try provider.value(forKey: token, type: .string).value?.content
            guard case .string("new-token")? = current else {
                Issue.record("the reload that started last did not make the current snapshot")
                checkNow.arrive()
                release.cancel()
                return
            }

            checkNow.arrive()
            release.cancel()
            try await group.waitForAll()
            #expect(checked.value == "new-token", "the snapshot watcher was last sent an older snapshot than the current one")
        }
    }
}

/// Says `true` to the first caller only.
final class Latch: Sendable {
    private let taken = Atomic(false)
    func first() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}

/// The token value the checked watcher saw.
final class Checked: Sendable {
    private let text = Mutex<String?>(nil)
    var value: String? { text.withLock { $0 } }
    func set(_ value: String) { text.withLock { $0 = value } }
}
#endif
