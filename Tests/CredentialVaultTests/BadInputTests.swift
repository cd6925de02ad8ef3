import Foundation
import Testing
import CredentialVaultTestSupport

@testable import CredentialVault

/// Hostile and damaged vault files: each gets a typed error, never wrong data, never a crash.
@Suite(.ownThread) final class BadInputTests {
    let dir = TempDirectory()

    /// A small vault with a portable and a device-only record.
    private func smallVault() throws -> (URL, [UInt8]) {
        let store = try TestVault.create(dir)
        try store.save(Data("portable-secret".utf8), for: CredentialKey(service: "s", account: "p"), options: .portable)
        try store.save(Data([0, 0xFF, 1]), for: CredentialKey(service: "s", account: "d"), options: .default)
        return (store.url, try TestVault.bytes(store.url))
    }

    /// Opens `bytes` as the vault at `url` and reads everything; returns the error it got.
    /// `derivations`, when given, counts the passphrase derivations the attempt ran.
    private func openAndReadAll(_ bytes: [UInt8], at url: URL, derivations: Arrivals? = nil) -> CredentialVaultError? {
        if case .failure(let error) = openAndRead(bytes, at: url, derivations: derivations) { return error }
        return nil
    }

    /// Opens `bytes` as the vault at `url`: everything it holds, or the error it got.
    private func openAndRead(
        _ bytes: [UInt8], at url: URL, derivations: Arrivals? = nil
    ) -> Result<[CredentialKey: Data], CredentialVaultError> {
        Result { () throws(CredentialVaultError) -> [CredentialKey: Data] in
            try? TestVault.write(bytes, to: url)
            var configuration = TestVault.configuration(dir)
            if let derivations { configuration.beforePassphraseDerivation = { derivations.arrive() } }
            let store = try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: configuration)
            var all: [CredentialKey: Data] = [:]
            for key in try store.listKeys() { all[key] = try store.load(key) }
            return all
        }
    }

    @Test func everyTruncationIsDetected() throws {
        let (url, bytes) = try smallVault()
        for length in 0..<bytes.count {
            let error = openAndReadAll(Array(bytes[..<length]), at: url)
            #expect(error != nil, "a vault truncated to \(length) of \(bytes.count) bytes must not open")
        }
        #expect(openAndReadAll(bytes, at: url) == nil, "the intact file still opens")
    }

    /// Every flipped bit is reported, except in the newest commit record, which the older one
    /// backs up: there a flip must leave the vault reading exactly as written (the older commit
    /// record and the journal entry after it give the same state, as after a torn commit). A
    /// flip in the older commit record, with no entry after the newest one, is a state no crash
    /// leaves: detected. The zero padding between the 4 KiB blocks is sampled, every other byte
    /// is tried.
    @Test func everyFlippedBitIsDetectedOrCorrected() throws {
        let (url, bytes) = try smallVault()
        guard case .success(let written) = openAndRead(bytes, at: url) else {
            Issue.record("the intact vault does not open")
            return
        }
        let commitRecords = CommitRecord.offsets.map { $0..<$0 + CommitRecord.size }
        let padding = [VaultHeader.size..<CommitRecord.offsets[0]] + commitRecords.map { $0.upperBound..<$0.lowerBound + CommitRecord.blockSize }
        let positions = (0..<bytes.count).filter { p in
            !padding.contains { $0.contains(p) } || p % 61 == 0 || padding.contains { $0.lowerBound == p || $0.upperBound - 1 == p }
        }
        var kinds: [String: Int] = [:]
        var corrected = [0, 0]  // by commit record
        for position in positions {
            for bit in [0, 7] {
                var damaged = bytes
                damaged[position] ^= UInt8(1 << bit)
                switch openAndRead(damaged, at: url) {
                case .failure(let error):
                    kinds["\(error)".prefix(24).description, default: 0] += 1
                case .success(let read) where commitRecords.contains(where: { $0.contains(position) }):
                    #expect(read == written, "a flipped bit \(bit) of byte \(position) (commit record) changed what the vault reads")
                    corrected[commitRecords.firstIndex { $0.contains(position) }!] += 1
                case .success:
                    Issue.record("flipping bit \(bit) of byte \(position) went undetected")
                }
            }
        }
        #expect(kinds.count >= 3, "header, key and record damage are told apart: \(kinds)")
        #expect(corrected.sorted() == [0, 2 * CommitRecord.size], "every flip in the newest commit record is corrected, none in the older: \(corrected)")
    }

    @Test func recordsSwappedBetweenVaultsAreRejected() throws {
        let a = try TestVault.create(dir, name: "a/v.cvault")
        let b = try TestVault.create(dir, name: "b/v.cvault")
        let key = CredentialKey(service: "s", account: "same-length")
        try a.save(Data("AAAA".utf8), for: key, options: .portable)
        try b.save(Data("BBBB".utf8), for: key, options: .portable)
        var aBytes = try TestVault.bytes(a.url)
        let bBytes = try TestVault.bytes(b.url)
        #expect(aBytes.count == bBytes.count)
        // Put b's commit records, snapshot and journal (its MACs included) into a's file.
        aBytes.replaceSubrange(CommitRecord.offsets[0]..<aBytes.count, with: bBytes[CommitRecord.offsets[0]...])
        let error = openAndReadAll(aBytes, at: a.url)
        #expect(error == .tampered)
    }

    @Test func journalEntriesCannotBeDroppedReorderedOrReplayed() throws {
        let store = try TestVault.create(dir)
        let empty = try TestVault.bytes(store.url).count
        var ends: [Int] = []
        for account in ["one", "two", "three"] {
            try store.save(Data(account.utf8), for: CredentialKey(service: "s", account: account), options: .portable)
            ends.append(try TestVault.bytes(store.url).count)
        }
        let bytes = try TestVault.bytes(store.url)
        let first = Array(bytes[empty..<ends[0]]), second = Array(bytes[ends[0]..<ends[1]]), third = Array(bytes[ends[1]...])
        let head = Array(bytes[..<empty])
        // A "clean" drop of the middle entry (the file then also ends before its commit).
        #expect(openAndReadAll(head + first + third, at: store.url) != nil)
        // The same length, but reordered, or the first entry replayed in place of the second.
        #expect(openAndReadAll(head + second + first + third, at: store.url) == .tampered)
        #expect(openAndReadAll(head + first + first + third, at: store.url) == .tampered)
        #expect(openAndReadAll(head + first + third + second, at: store.url) == .tampered)
    }

    @Test func snapshotRecordsCannotBeDroppedOrReordered() throws {
        let store = try TestVault.create(dir)
        for account in ["one", "two"] { try store.save(Data(account.utf8), for: CredentialKey(service: "s", account: account), options: .portable) }
        try store.rotateDataKey(secret: .passphrase(TestVault.passphrase))  // a rewrite: both records now in the snapshot
        var bytes = try TestVault.bytes(store.url)
        let start = CommitRecord.snapshotOffset
        let firstLength = Int(bytes[start]) | Int(bytes[start + 1]) << 8
        // Set the record count to 1 and cut the second record: a "clean" drop.
        bytes[VaultHeader.Offset.recordCount] = 1
        let cut = start + 4 + firstLength
        let second = Array(bytes[cut..<bytes.count - 32])
        bytes.removeSubrange(cut..<bytes.count - 32)
        #expect(openAndReadAll(bytes, at: store.url) == .tampered)
        // Both records, in the other order.
        bytes[VaultHeader.Offset.recordCount] = 2
        bytes.insert(contentsOf: second, at: start)
        #expect(openAndReadAll(bytes, at: store.url) == .tampered)
    }

    /// Any major but 1 is another format (`unsupported`, before any key derivation): a higher
    /// one is newer (upgrade), 0 is none of this library's.
    @Test func anotherMajorVersionIsRefused() throws {
        let (url, bytes) = try smallVault()
        for major in [2, 0x7FFF, 0] {
            var other = bytes
            withUnsafeBytes(of: UInt16(major).littleEndian) { other.replaceSubrange(VaultHeader.Offset.major..<VaultHeader.Offset.major + 2, with: $0) }
            let derivations = Arrivals()
            let error = openAndReadAll(other, at: url, derivations: derivations)
            guard case .unsupported(let message) = error else {
                Issue.record("expected unsupported for major \(major), got \(String(describing: error))")
                continue
            }
            let expected = major == 0 ? "not a CredentialVault format" : "\(major).0 is newer than this library"
            #expect(message.contains(expected) && (major == 0 || message.contains("upgrade")), "\(message)")
            #expect(derivations.count == 0, "refused without running the KDF")
        }
        var newerMinor = bytes
        newerMinor[10] = 9
        #expect(openAndReadAll(newerMinor, at: url) != nil, "the minor version is authenticated too")
    }

    /// An incompatible feature bit this library does not know (1.0 knows none) is a newer
    /// format: `unsupported`, saying to upgrade, before any key derivation. (Were it not refused
    /// first, the edit would only read as a wrong passphrase: the bits are in the wrap's
    /// associated data.)
    @Test func anUnknownIncompatibleFeatureIsRefusedAsNewer() throws {
        let (url, bytes) = try smallVault()
        for bit in [0, 17, 31] {
            var newer = bytes
            let offset = VaultHeader.Offset.incompatibleFeatures
            withUnsafeBytes(of: (UInt32(1) << bit).littleEndian) { newer.replaceSubrange(offset..<offset + 4, with: $0) }
            let derivations = Arrivals()
            guard case .unsupported(let message) = openAndReadAll(newer, at: url, derivations: derivations) else {
                Issue.record("incompatible feature bit \(bit) was not refused as unsupported")
                continue
            }
            #expect(message.contains("newer format") && message.contains("upgrade"), "\(message)")
            #expect(derivations.count == 0, "refused without running the KDF")
        }
    }

    /// Parameters costing more than the strongest preset the project writes (`sensitive`: 4
    /// passes over 1 GiB) are refused before any derivation. (At 59df243 ops 16 at 1 GiB was
    /// accepted: an edit of one header byte made every unlock take 14-29 s.)
    @Test func absurdKDFParametersAreRefusedBeforeRunning() throws {
        let (url, bytes) = try smallVault()
        let sensitive = KDFParameters.sensitive
        let ops = VaultHeader.Offset.opsLimit, memory = VaultHeader.Offset.memLimit
        for (offset, value) in [
            (ops, UInt64(1_000_000)), (memory, UInt64(1) << 40), (memory, 0), (ops, 0), (ops, 17), (memory, sensitive.memLimitBytes + 1024),
        ] {
            var hostile = bytes
            withUnsafeBytes(of: value.littleEndian) { hostile.replaceSubrange(offset..<offset + 8, with: $0) }
            let derivations = Arrivals()
            let error = openAndReadAll(hostile, at: url, derivations: derivations)
            guard case .corrupted(let message) = error else {
                Issue.record("expected corrupted for KDF field \(offset) = \(value), got \(String(describing: error))")
                continue
            }
            #expect(message.contains("KDF"))
            #expect(derivations.count == 0, "refused without running the KDF")
        }
        // More passes than sensitive over its 1 GiB, in a header and from a caller: refused.
        for passes in [sensitive.opsLimit + 1, 16] {
            var hostile = bytes
            withUnsafeBytes(of: passes.littleEndian) { hostile.replaceSubrange(ops..<ops + 8, with: $0) }
            withUnsafeBytes(of: sensitive.memLimitBytes.littleEndian) { hostile.replaceSubrange(memory..<memory + 8, with: $0) }
            let derivations = Arrivals()
            guard case .corrupted(let message) = openAndReadAll(hostile, at: url, derivations: derivations) else {
                Issue.record("ops \(passes) at 1 GiB was not refused")
                continue
            }
            #expect(message.contains("KDF") && derivations.count == 0, "refused without running the KDF")
            expectThrows(\CredentialVaultError.isInvalidArgument) { try KDFParameters(opsLimit: passes, memLimitBytes: sensitive.memLimitBytes) }
        }
        #expect(try KDFParameters(opsLimit: sensitive.opsLimit, memLimitBytes: sensitive.memLimitBytes) == sensitive)
        #expect(try KDFParameters(opsLimit: 16, memLimitBytes: 256 << 20).opsLimit == 16, "the same work, in more passes")
    }

    /// A record whose name breaks the rules every save checks (an empty service, a NUL, more
    /// than 4096 bytes), which only a faulty writer with the key can store, is `corrupted`:
    /// read as it was, it was listed but could never be loaded, saved over or deleted by its name.
    @Test func aRecordWhoseNameBreaksTheNameRulesIsCorrupted() throws {
        let long = String(repeating: "n", count: 4097)
        for (index, bad) in [
            CredentialKey(service: "", account: "a"), CredentialKey(service: "s\u{0}x", account: "a"),
            CredentialKey(service: "s", account: "a\u{0}"), CredentialKey(service: "s", account: long),
            CredentialKey(service: long, account: "a"), CredentialKey(service: "s", account: "a", label: "l\u{0}"),
        ].enumerated() {
            let store = try TestVault.create(dir, name: "names\(index)/v.cvault")
            try store.save(Data("fine".utf8), for: CredentialKey(service: "s", account: "ok"), options: .portable)
            // Straight into the record table, past the checks of save.
            try store.mutate { (s) throws(CredentialVaultError) in
                s.contents.records[bad] = RecordCodec.seal(
                    key: bad, value: Data("bad".utf8), accessibility: .portable, expiresAtMillis: 0,
                    vaultID: s.contents.header.vaultID, keys: s.keys, deviceKey: nil, times: RecordTimes(createdMillis: 1, modifiedMillis: 1))
            }
            let error = openAndReadAll(try TestVault.bytes(store.url), at: store.url)
            guard case .corrupted(let message) = error else {
                Issue.record("a record named \(bad.service.utf8.count)/\(bad.account.utf8.count) bytes was not refused: \(String(describing: error))")
                continue
            }
            #expect(message.contains("name"), "\(message)")
        }
    }

    /// The snapshot's record count is authenticated only by the snapshot MAC, which is checked
    /// over the table it frames: a count forged to frame a large file as millions of minimal
    /// records is refused (`tampered`) having framed them, never having copied each one out
    /// first. (It cost the reader a copy of every "record", about twice the file again: a
    /// 1 GiB file, the most a reader accepts, took ~5 GB.) The CLI's peak memory is measured;
    /// it may read the file twice (it checks a refusal by reading again), so the bound is about
    /// two copies of the file. Not under sanitizers, whose allocator costs more.
    @Test(.disabled(if: Sanitizers.active, "sanitizers inflate memory use"))
    func aForgedRecordCountCostsTheReaderNoCopyOfEveryRecord() async throws {
        let (url, bytes) = try smallVault()
        let size = 64 << 20
        let record = withUnsafeBytes(of: UInt32(VaultFile.minRecordSize).littleEndian) { Array($0) }
            + [UInt8](repeating: 0x41, count: VaultFile.minRecordSize)
        let count = (size - CommitRecord.snapshotOffset - Crypto.macBytes) / record.count
        var forged = Array(bytes[..<CommitRecord.snapshotOffset])
        withUnsafeBytes(of: UInt32(count).littleEndian) { forged.replaceSubrange(VaultHeader.Offset.recordCount..<VaultHeader.Offset.recordCount + 4, with: $0) }
        forged.reserveCapacity(size)
        for _ in 0..<count { forged += record }
        forged += [UInt8](repeating: 0, count: Crypto.macBytes)
        try TestVault.write(forged, to: url)
        let passphrase = dir.path("passphrase")
        #expect(FileManager.default.createFile(atPath: passphrase.path, contents: Data(TestVault.passphrase.utf8), attributes: [.posixPermissions: 0o600]))

        // Measured by a small parent of its own: a process started from this one (large while
        // other tests run) would carry this process's peak into its own (Linux keeps the peak
        // across exec).
        let measure = """
            import os, sys
            pid = os.fork()
            if pid == 0:
                os.execve(sys.argv[1], sys.argv[1:], os.environ)
            _, status, usage = os.wait4(pid, 0)
            print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)
            """
        let reader = try CLIProcess(
            ["-c", measure, BuiltProducts.credvault.path, "list", "--vault", url.path, "--passphrase-file", passphrase.path],
            executable: URL(fileURLWithPath: "/usr/bin/python3"), environment: CLIChild.environment(dir))
        #expect(try await reader.wait() == 0, "\(reader.stderr)")
        let measured = reader.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(measured.count == 2, "\(reader.stdout)")
        #expect(measured[0] == 5, "refused as tampered (exit 5): \(reader.stderr)")
        #expect(measured[1] < forged.count * 11 / 4 + (48 << 20), "peak \(measured[1] >> 20) MiB for a \(forged.count >> 20) MiB file")
    }

    @Test func notAVaultAndEmptyFile() throws {
        let (url, _) = try smallVault()
        #expect(openAndReadAll(Array("{\"json\": true}".utf8), at: url) == .corrupted("not a CredentialVault file"))
        #expect(openAndReadAll([], at: url) == .corrupted("file too short to be a vault"))
    }

    @Test func aLockHeldByAnotherProcessGivesBusyNotAHang() throws {
        let store = try TestVault.create(dir, lockTimeout: .milliseconds(300))
        let holder = try HelperProcess(["hold-lock", store.url.path, "120"], environment: [:])
        defer { holder.kill() }
        try holder.waitForLine(startingWith: "locked")
        let outcome = withinDeadline(.seconds(60), "a save waiting 300 ms for a held lock") {
            Result { () throws(CredentialVaultError) in
                try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
            }
        }
        guard case .failure(.busy)? = outcome else { Issue.record("expected busy, got \(String(describing: outcome))"); return }
        #expect(holder.process.isRunning, "busy came from the bounded wait, not from the lock's release")
        #expect(try store.load(CredentialKey(service: "s", account: "a")) == nil, "nothing half-written")
        // A SIGKILLed holder leaves no stale lock.
        holder.kill()
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
    }
}
