import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

/// Created and modified dates keep their millisecond through the store and `list --json`.
@Suite(.ownThread, .enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetDatesTests {
    /// A clock set to whole milliseconds, made the way every store makes a date from them.
    final class MillisecondClock: CredentialClock {
        let milliseconds = Mutex<Int64>(0)
        func now() -> Date { Date(timeIntervalSince1970: Double(milliseconds.withLock { $0 }) / 1000) }
    }

    /// `ms` since 1970 as ISO 8601 with milliseconds, by integer arithmetic (whole seconds are
    /// exact in a `Date`, so only they go through a formatter).
    static func iso(_ ms: Int64) -> String {
        let seconds = Date(timeIntervalSince1970: Double(ms / 1000)).formatted(Date.ISO8601FormatStyle())
        return String(seconds.dropLast()) + String(format: ".%03dZ", Int(ms % 1000))
    }

    @Test func listJSONPrintsEveryDateToTheMillisecond() throws {
        let clock = MillisecondClock()
        let fleet = try TestFleet(clock: clock, freshness: .zero)
        // 1 ms apart, the same values on every run: a truncation anywhere shows on some of them.
        let first: Int64 = 1_767_225_600_001
        let count = 120
        for i in 0..<count {
            clock.milliseconds.withLock { $0 = first + Int64(i) }
            try fleet.store.synchronous.save(Data("v".utf8), for: CredentialKey(service: "dates", account: String(format: "%03d", i)), options: .portable)
        }
        for i in 0..<count {
            let meta = try #require(try fleet.store.synchronous.metadata(for: CredentialKey(service: "dates", account: String(format: "%03d", i))))
            let ms = try #require(meta.created).timeIntervalSince1970 * 1000
            #expect(ms.rounded() == Double(first + Int64(i)), "the store kept \(ms) for \(first + Int64(i))")
        }
        let listed = try fleet.commandLine.run(["list", "--backend", "postgres", "--json"], conninfo: fleet.conninfo)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: String]], "\(listed)")
        #expect(items.count == count)
        var wrong: [String] = []
        for item in items {
            let i = Int64(item["account"] ?? "") ?? -1
            let expected = Self.iso(first + i)
            if item["created"] != expected || item["modified"] != expected {
                wrong.append("\(item["account"] ?? "?"): \(item["created"] ?? "none") for \(expected)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(count) dates are off: \(wrong.prefix(5))")
    }
}
