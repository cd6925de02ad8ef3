import CredentialVault
import CredentialVaultPostgres
import Foundation
import Testing

/// Several processes (hosts) on one fleet store: no write lost, `take` single use, the
/// fleet-wide lock released when its holder dies, and the staleness bound of cached reads.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetMultiProcessTests {
    func helperArguments(_ command: String, _ fleet: TestFleet, _ extra: [String] = []) -> [String] {
        [command, fleet.conninfo, fleet.schema, fleet.keys.keyFile.path] + extra
    }

    @Test func eightProcessesTimes250WritesAreExact() throws {
        let fleet = try TestFleet(freshness: .zero)
        let writers = 8
        let count = 250
        let helpers = try (0..<writers).map { i in try FleetHelperProcess(helperArguments("writes", fleet, [String(i), String(count)])) }
        for helper in helpers {
            try helper.waitForLine(startingWith: "done")
            #expect(helper.waitForExit() == 0)
        }
        // Every save of the shared credential was a compare-and-swap on the version before it:
        // 2000 saves, version 2000 (one lost update would leave it lower).
        #expect(try TestCluster.psql("SELECT max(version) FROM \(fleet.records)") == String(writers * count))
        let keys = try fleet.store.synchronous.listKeys()
        #expect(keys.count == writers * count + 1)
        for i in 0..<writers {
            #expect(try fleet.store.synchronous.listKeys(service: "writer-\(i)").count == count)
            #expect(try fleet.store.synchronous.load(CredentialKey(service: "writer-\(i)", account: "\(count - 1)")) == Data("\(i)-\(count - 1)".utf8))
        }
        let last = try #require(try fleet.store.synchronous.load(CredentialKey(service: "shared", account: "counter")))
        #expect(String(decoding: last, as: UTF8.self).hasSuffix("-\(count - 1)"), "the shared value is some writer's last save")
    }

    @Test func eightProcessesRaceForOneTakeAndOneWins() throws {
        let fleet = try TestFleet(freshness: .zero)
        try fleet.store.synchronous.save(Data("one-time".utf8), for: CredentialKey(service: "race", account: "once"), options: .ephemeral())
        let helpers = try (0..<8).map { _ in try FleetHelperProcess(helperArguments("take", fleet)) }
        for helper in helpers { try helper.waitForLine(startingWith: "ready") }
        for helper in helpers { helper.send("go") }
        var winners = 0
        var nones = 0
        for helper in helpers {
            let line = try helper.waitForLine(startingWith: "")
            if line == "won one-time" { winners += 1 } else if line == "none" { nones += 1 }
            #expect(helper.waitForExit() == 0)
        }
        #expect(winners == 1 && nones == 7, "winners \(winners), empty-handed \(nones)")
        #expect(try TestCluster.psql("SELECT count(*) FROM \(fleet.records)") == "0")
    }

    @Test func theFleetLockIsReleasedWhenItsHolderDies() async throws {
        let fleet = try TestFleet()
        var configuration = fleet.configuration()
        configuration.exclusiveAccessTimeout = .milliseconds(300)
        let store = try await PostgresStore.open(configuration, host: "test-host", key: .keyFile(fleet.keys.keyFile))
        let holder = try FleetHelperProcess(helperArguments("hold-exclusive", fleet))
        try holder.waitForLine(startingWith: "holding")
        // Held by another process: busy after the bounded wait.
        let started = ContinuousClock.now
        await #expect(throws: CredentialVaultError.busy) { try await store.withExclusiveAccess { 1 } }
        #expect(started.duration(to: .now) < .seconds(2))
        // The holder dies without unlocking: its session ends and the server frees the lock.
        holder.kill()
        configuration.exclusiveAccessTimeout = .seconds(5)
        let again = try await PostgresStore.open(configuration, host: "test-host", key: .keyFile(fleet.keys.keyFile))
        #expect(try await again.withExclusiveAccess { 42 } == 42)
    }

    @Test func theFleetLockExcludesAcrossStoresAndIsReentrant() async throws {
        let fleet = try TestFleet()
        var configuration = fleet.configuration()
        configuration.exclusiveAccessTimeout = .milliseconds(200)
        let other = try await PostgresStore.open(configuration, host: "test-host", key: .keyFile(fleet.keys.keyFile))
        let key = CredentialKey(service: "lock", account: "k")
        let value = try await fleet.store.withExclusiveAccess {
            // Re-entrant in the holding task, and the store's operations work inside.
            try await fleet.store.withExclusiveAccess {
                try await fleet.store.save(Data("inside".utf8), for: key, options: .portable)
            }
            // Another store (another host's view) cannot take it meanwhile.
            await #expect(throws: CredentialVaultError.busy) { try await other.withExclusiveAccess { 0 } }
            return try await fleet.store.load(key)
        }
        #expect(value == Data("inside".utf8))
        #expect(try await other.withExclusiveAccess { 7 } == 7, "released after the body")
    }

    @Test func aProcessReadsItsOwnWritesWhileOthersWrite() async throws {
        let fleet = try TestFleet(freshness: .seconds(30))
        let other = try fleet.reopen(freshness: .seconds(30))
        // Another host keeps writing: generation bumps and NOTIFY wake-ups race with the reads.
        let noise = Task {
            var i = 0
            while !Task.isCancelled {
                try await other.save(Data("n\(i)".utf8), for: CredentialKey(service: "noise", account: "\(i % 7)"), options: .portable)
                i += 1
            }
        }
        defer { noise.cancel() }
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<80 {
                        let key = CredentialKey(service: "own", account: "\(task)-\(round % 3)")
                        let value = Data("\(task)-\(round)".utf8)
                        try await fleet.store.save(value, for: key, options: .portable)
                        if try await fleet.store.load(key) != value { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0, "\(mismatches) reads did not see this process's own write")
    }

    @Test func aCancelledLockWaitEndsAtOnce() async throws {
        let fleet = try TestFleet()
        let other = try await PostgresStore.open(fleet.configuration(), host: "test-host", key: .keyFile(fleet.keys.keyFile))
        let holder = try FleetHelperProcess(helperArguments("hold-exclusive", fleet))
        defer { holder.kill() }
        try holder.waitForLine(startingWith: "holding")
        // Waits up to the default 10 s for the lock; cancelled once the server shows it waiting.
        let waiter = Task { try await other.withExclusiveAccess { 1 } }
        let deadline = ContinuousClock.now + .seconds(5)
        while try TestCluster.psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") == "0" {
            guard ContinuousClock.now < deadline else { throw TestFailure("the waiter never waited") }
        }
        let cancelled = ContinuousClock.now
        waiter.cancel()
        do {
            _ = try await waiter.value
            Issue.record("the cancelled wait got the lock")
        } catch let error as CredentialVaultError {
            #expect(error == .cancelled)
        }
        #expect(cancelled.duration(to: .now) < .seconds(1), "the cancelled wait took \(cancelled.duration(to: .now))")
    }

    @Test func aWriteIsSeenByAnotherHostWithinTheFreshnessInterval() async throws {
        let interval = Duration.milliseconds(300)
        let fleet = try TestFleet(freshness: interval)
        let key = CredentialKey(service: "stale", account: "k")
        let reader = try fleet.reopen(freshness: interval)
        try fleet.store.synchronous.save(Data("v1".utf8), for: key, options: .portable)
        #expect(try reader.synchronous.load(key) == Data("v1".utf8))
        let written = ContinuousClock.now
        try fleet.store.synchronous.save(Data("v2".utf8), for: key, options: .portable)
        // Polled until seen: the documented bound is the interval (plus a round trip).
        var seen: Data?
        while seen != Data("v2".utf8) {
            seen = try await reader.load(key)
            guard written.duration(to: .now) < interval + .seconds(3) else { break }
        }
        let lag = written.duration(to: .now)
        #expect(seen == Data("v2".utf8), "not seen after \(lag)")
        // The margin covers the two round trips (the save, the read) on a loaded 2-core machine.
        #expect(lag <= interval + .milliseconds(500), "seen after \(lag), bound \(interval)")
        // A store opened without a cache sees it at once.
        let uncached = try fleet.reopen(freshness: .zero)
        #expect(try uncached.synchronous.load(key) == Data("v2".utf8))
    }

    @Test func aCachedReadIsServedUntilTheIntervalAndNotifyWakesItEarly() async throws {
        let fleet = try TestFleet(freshness: .zero)
        let key = CredentialKey(service: "notify", account: "k")
        try fleet.store.synchronous.save(Data("v1".utf8), for: key, options: .portable)
        var quiet = fleet.configuration(freshness: .seconds(30))
        quiet.listensForChanges = false
        let cached = try await PostgresStore.open(quiet, host: "test-host", key: .keyFile(fleet.keys.keyFile))
        let listening = try await PostgresStore.open(fleet.configuration(freshness: .seconds(30)), host: "test-host", key: .keyFile(fleet.keys.keyFile))
        #expect(try cached.synchronous.load(key) == Data("v1".utf8))
        #expect(try listening.synchronous.load(key) == Data("v1".utf8))
        try fleet.store.synchronous.save(Data("v2".utf8), for: key, options: .portable)
        // Within its 30 s interval and without the hint, the cache answers (no round trip).
        #expect(try cached.synchronous.load(key) == Data("v1".utf8))
        // The NOTIFY hint expires the other's cache long before its interval.
        let written = ContinuousClock.now
        var seen: Data?
        while seen != Data("v2".utf8), written.duration(to: .now) < .seconds(5) {
            seen = try await listening.load(key)
        }
        #expect(seen == Data("v2".utf8), "the notification never woke the cache")
    }
}
