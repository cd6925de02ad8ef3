import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

/// Listing every credential reads the attributes of each item of the collection, other
/// programs' items included (on KeePassXC, whose empty search answers nothing, the listing is
/// the collection's `Items`). An item another program deletes meanwhile is simply not listed:
/// never an error. KeePassXC answers a property read of an item it has just deleted with
/// `UnknownInterface` ("Interface ... was not found in object ...") rather than "no such
/// object" when the deletion overtook the read inside KeePassXC (Qt routes the read to the
/// item on its D-Bus thread, KeePassXC's main thread unregisters the item before handling it).
///
/// That overtaking cannot be forced from outside KeePassXC, so this is a stress loop: churning
/// stores save and delete items of their own while the lister lists, until every churner
/// finished its cycles. Many listings overlap a deletion: when such a read was an error, 16 to
/// 32 of about 57 listings failed, in each of 6 runs. The same is checked on KWallet, also a Qt
/// D-Bus service. (gnome-keyring's answers for a deleted item are GDBus's "No such ...", long
/// recognised; there a listing reads every item of the test session's keyring, which in a full
/// parallel run is slow enough to need far more than a listing's deadline.)
@Suite(.ownThread) struct ListingWhileOthersDeleteTests {
    @Test(.sharedProvider(.keepassxc))
    func keepassxcListingSkipsItemsDeletedMeanwhile() async throws {
        try await Self.listWhileOthersDelete(on: .keepassxc)
    }

    @Test(.sharedProvider(.kwallet))
    func kwalletListingSkipsItemsDeletedMeanwhile() async throws {
        try await Self.listWhileOthersDelete(on: .kwallet)
    }

    /// How many stores save and delete items while the lister lists, and how many times each.
    static let churners = 4
    static let cycles = 40
    /// Each operation's deadline: generous, as a listing reads every item of a collection other
    /// tests fill at the same time; a slow answer is not what this test is about.
    static let deadline = Duration.seconds(60)

    /// Every listing made while other stores delete their items succeeds and lists exactly the
    /// lister's own credentials.
    static func listWhileOthersDelete(on provider: Provider) async throws {
        let run = UUID().uuidString.prefix(8)
        let lister = SecretServiceStore(configuration: provider.configuration(prefix: "cvlisting-\(run)/", timeout: deadline))
        defer { _ = try? lister.deleteAll() }
        let own = [CredentialKey(service: "listing.own", account: "a"), CredentialKey(service: "listing.own", account: "b")]
        for key in own { try await lister.save(Data("v".utf8), for: key) }
        let churning = (0..<churners).map { index in
            SecretServiceStore(configuration: provider.configuration(prefix: "cvchurn-\(run)-\(index)/", timeout: deadline))
        }
        defer { for store in churning { _ = try? store.deleteAll() } }

        let tally = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in churning.enumerated() {
                group.addTask {
                    defer { tally.finished.add(1, ordering: .sequentiallyConsistent) }
                    for cycle in 0..<cycles {
                        let key = CredentialKey(service: "listing.churn", account: "c\(index)-\(cycle)")
                        try await store.save(Data("c".utf8), for: key)
                        #expect(try await store.delete(key))
                    }
                }
            }
            group.addTask {
                while tally.finished.load(ordering: .sequentiallyConsistent) < churners {
                    do throws(CredentialVaultError) {
                        let listed = try await lister.listKeys(service: nil)
                        tally.listings.withLock { state in
                            state.count += 1
                            if listed != own { state.wrong.append(listed) }
                        }
                    } catch {
                        tally.listings.withLock { $0.failures.append(error) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let result = tally.listings.withLock { $0 }
        let failed = result.failures.count
        #expect(failed == 0, "\(failed) of \(result.count + failed) listings failed: \(result.failures.prefix(3))")
        #expect(result.wrong.isEmpty, "listings other than the lister's own credentials: \(result.wrong.prefix(3))")
        #expect(result.count + result.failures.count > 0, "the lister listed while the churners worked")
    }
}

/// What the tasks of `ListingWhileOthersDeleteTests` share: how many churners finished, and
/// the lister's outcomes.
private final class Tally: Sendable {
    let finished = Atomic<Int>(0)
    let listings = Mutex<(count: Int, failures: [CredentialVaultError], wrong: [[CredentialKey]])>((0, [], []))
}
