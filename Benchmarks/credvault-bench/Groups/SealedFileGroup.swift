import CredentialVault
import Foundation

/// Group 3: durable save, load and delete on an open sealed-file vault holding N credentials,
/// next to the physical floor of a durable save of a file of the same size (the project's floor)
/// and the floor of the journal's design (an append and a commit record, each fdatasync'd), all
/// measured in turn with the saves (A B C A B C ...) in the same directory; and one whole journal
/// cycle, compaction included.
enum SealedFileGroup {
    static let title = "Sealed-file backend: open vault with N items (key file, device-only records, 128 B values)"
    static let valueSize = 128

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) throws {
        reporter.begin(title)
        let fixture = try VaultFixture(workspace: workspace, name: "file")
        let value = Data((0..<valueSize).map { _ in UInt8.random(in: 0...255) })
        var baseline: [String: (items: Int, median: Double)] = [:]
        for count in options.items {
            reporter.progress("   filling the vault to \(count) items")
            try fixture.grow(to: count, value: value)
            let directory = try workspace.directory("file-\(count)")
            let url = try fixture.copy(to: directory)
            let store = try SealedFileStore.open(at: url, secret: fixture.secret, configuration: workspace.configuration)
            let keys = (0..<count).map(VaultFixture.credentialKey)
            // Saves replace existing credentials, so the vault keeps `count` items throughout.
            var next = 0
            func pick() -> CredentialKey {
                next = (next + 7919) % count
                return keys[next]
            }
            try store.save(value, for: keys[0], options: .default)
            let fileBytes = try fileSize(url)
            let floor = FileFloor(directory: directory, fileSize: fileBytes, valueSize: valueSize)
            try store.save(value, for: keys[0], options: .default)
            let entryBytes = try fileSize(url) - fileBytes  // what one save appends
            let journalFloor = try JournalFloor(directory: directory, fileSize: fileBytes, entrySize: entryBytes, valueSize: valueSize)
            reporter.progress("   measuring \(count) items (\(Format.bytes(fileBytes)))")
            // Save, floor and delete in turn; a delete's credential is put back untimed first.
            var deletedKey: CredentialKey?
            let durable = try Timer.measureInterleaved(Plan.durable(options), [
                Timed { try store.save(value, for: pick(), options: .default) },
                Timed { try floor.run() },
                Timed { try journalFloor.run() },
                Timed(setup: {
                    if let key = deletedKey { try store.save(value, for: key, options: .default) }
                    deletedKey = pick()
                }) {
                    guard try store.delete(deletedKey!) else { throw BenchError("delete found nothing") }
                },
            ])
            if let key = deletedKey { try store.save(value, for: key, options: .default) }
            let loaded = try Timer.measure(Plan.fast(options)) {
                guard let found = try store.load(pick()), found.count == valueSize else { throw BenchError("load lost a value") }
                blackHole(found)
            }
            let saved = Array(durable[0...2]), deleted = durable[3]
            reporter.progress("   one journal cycle at \(count) items (saves until the journal is compacted)")
            let cycle = try compactionCycle(store, url: url, secret: fixture.secret, value: value, pick: pick)

            let floorFigure = figure("file_floor", count, fileBytes, saved[1])
            var save = figure("file_save", count, fileBytes, saved[0])
            save.relate(to: floorFigure)
            save.checks.append(.atMost("ratio to floor", save.ratio!, 1.2))
            let journalFloorFigure = figure("file_journal_floor", count, fileBytes, saved[2])
            save.extra.append(JSONField("ratio_to_journal_floor", .double(saved[0].median / saved[2].median)))
            var load = figure("file_load", count, fileBytes, loaded)
            load.checks.append(.atMost("median", load.sample.median, 10_000, unit: "ns"))
            var delete = figure("file_delete", count, fileBytes, deleted)
            delete.relate(to: floorFigure)
            var amortized = figure("file_save_amortized", count, fileBytes, Sample(perOpNanos: [cycle.mean], iterations: cycle.saves))
            amortized.extra += [JSONField("rewrite_ns", .double(cycle.rewrite)), JSONField("cycle_saves", .int(cycle.saves))]
            amortized.relate(to: floorFigure)
            var figures = [save, floorFigure, journalFloorFigure, amortized, load, delete]
            for index in figures.indices { scale(&figures[index], count: count, baseline: &baseline) }
            for item in figures { reporter.add(item) }
        }
        reporter.note("file_save replaces an existing credential (the vault keeps N items); file_delete deletes one (re-added untimed); both append one journal entry and commit it (lock, pwrite, fdatasync, commit record, fdatasync).")
        reporter.note("file_save_amortized: one batch of saves from a fresh snapshot up to and including the save that compacts the journal into a new snapshot (a whole-file rewrite: temp file, fsync, rename, fsync dir), divided by its saves; rewrite_ns is that last save, cycle_saves the batch.")
        reporter.note("file_journal_floor: the floor of the journal's design: raw seal of one 128 B value + pwrite of one save's entry at the end of a file of the vault's size, fdatasync, pwrite of an 88-byte commit record at offset 4096, fdatasync; file_save's ratio to it is in the JSON (ratio_to_journal_floor).")
        reporter.note("file_floor: raw seal of one 128 B value + write a file of the vault's size to a temp file, fsync, rename, fsync dir; measured in turn with file_save and file_delete, in the same directory.")
        reporter.end()
    }

    /// Saves from a fresh snapshot (a key change to the same key rewrites the file) until one
    /// save rewrites the file again (a new inode): the whole cost of a journal cycle.
    private static func compactionCycle(
        _ store: SealedFileStore, url: URL, secret key: VaultSecret, value: Data, pick: () -> CredentialKey
    ) throws -> (mean: Double, rewrite: Double, saves: Int) {
        try store.changeSecret(from: key, to: key)
        let start = try inode(url)
        var total = 0.0
        for saves in 1...1_000_000 {
            let credential = pick()
            let began = ContinuousClock.now
            try store.save(value, for: credential, options: .default)
            let took = (ContinuousClock.now - began).nanoseconds
            total += took
            if try inode(url) != start { return (total / Double(saves), took, saves) }
        }
        throw BenchError("a million saves and the journal was never compacted")
    }

    private static func inode(_ url: URL) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        guard let inode = attributes[.systemFileNumber] as? NSNumber else { throw BenchError("cannot stat \(url.path)") }
        return inode.uint64Value
    }

    /// Relates a figure to the same figure at the smallest item count; save and load are held
    /// to the flatness targets (1 to 1,000 items: at most 1.3x; to 10,000: at most 2x).
    private static func scale(_ figure: inout Figure, count: Int, baseline: inout [String: (items: Int, median: Double)]) {
        guard let base = baseline[figure.name] else {
            baseline[figure.name] = (count, figure.sample.median)
            return
        }
        let scale = figure.sample.median / base.median
        figure.extra.append(JSONField("scale_vs_\(base.items)", .double(scale)))
        if base.items == 1 && (figure.name == "file_save" || figure.name == "file_load") {
            figure.checks.append(.atMost("vs 1 item", scale, count <= 1_000 ? 1.3 : 2.0))
        }
    }

    private static func figure(_ name: String, _ items: Int, _ fileBytes: Int, _ sample: Sample) -> Figure {
        var figure = Figure(group: title, name: name, items: items, sample: sample)
        figure.extra = [JSONField("file_bytes", .int(fileBytes)), JSONField("value_bytes", .int(valueSize))]
        return figure
    }

    private static func fileSize(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        guard let size = attributes[.size] as? NSNumber else { throw BenchError("cannot stat \(url.path)") }
        return size.intValue
    }
}
