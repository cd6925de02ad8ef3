import Foundation
import Testing

@testable import CredentialVault

/// Hostile and damaged vault files: each gets a typed error, never wrong data, never a crash.
@Suite final class BadInputTests {
    let dir = TempDirectory()

    /// A small vault with a portable and a device-only record.
    private func smallVault() throws -> (URL, [UInt8]) {
        let store = try TestVault.create(dir)
        try store.save(Data("portable-secret".utf8), for: CredentialKey(service: "s", account: "p"), options: .portable)
        try store.save(Data([0, 0xFF, 1]), for: CredentialKey(service: "s", account: "d"), options: .default)
        return (store.url, try TestVault.bytes(store.url))
    }

    /// Opens `bytes` as the vault at `url` and reads everything; returns the error it got.
    private func openAndReadAll(_ bytes: [UInt8], at url: URL) -> CredentialVaultError? {
        do throws(CredentialVaultError) {
            try? TestVault.write(bytes, to: url)
            let store = try SealedFileStore.open(
                at: url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            for key in try store.listKeys() { _ = try store.load(key) }
            return nil
        } catch {
            return error
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

    @Test func everyFlippedBitIsDetected() throws {
        let (url, bytes) = try smallVault()
        var kinds: [String: Int] = [:]
        for position in 0..<bytes.count {
            for bit in [0, 7] {
                var damaged = bytes
                damaged[position] ^= UInt8(1 << bit)
                guard let error = openAndReadAll(damaged, at: url) else {
                    Issue.record("flipping bit \(bit) of byte \(position) went undetected")
                    continue
                }
                kinds["\(error)".prefix(24).description, default: 0] += 1
            }
        }
        #expect(kinds.count >= 3, "header, key and record damage are told apart: \(kinds)")
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
        // Put b's record (and even b's MAC) into a's file.
        aBytes.replaceSubrange(VaultHeader.size..<aBytes.count, with: bBytes[VaultHeader.size...])
        let error = openAndReadAll(aBytes, at: a.url)
        #expect(error == .tampered)
    }

    @Test func recordsCannotBeDroppedOrReordered() throws {
        let store = try TestVault.create(dir)
        for account in ["one", "two"] { try store.save(Data(account.utf8), for: CredentialKey(service: "s", account: account), options: .portable) }
        var bytes = try TestVault.bytes(store.url)
        // Set the record count to 1 and cut the second record: a "clean" drop.
        let firstLength = Int(bytes[VaultHeader.size]) | Int(bytes[VaultHeader.size + 1]) << 8
        bytes[144] = 1
        let cut = VaultHeader.size + 4 + firstLength
        bytes.removeSubrange(cut..<bytes.count - 32)
        #expect(openAndReadAll(bytes, at: store.url) == .tampered)
    }

    @Test func aFutureMajorVersionIsRefused() throws {
        let (url, bytes) = try smallVault()
        var future = bytes
        future[8] = UInt8(VaultHeader.currentMajor + 1)
        let error = openAndReadAll(future, at: url)
        guard case .unsupported(let message) = error else {
            Issue.record("expected unsupported, got \(String(describing: error))")
            return
        }
        #expect(message.contains("\(VaultHeader.currentMajor + 1).0") && message.contains("upgrade"))
        var newerMinor = bytes
        newerMinor[10] = 9
        #expect(openAndReadAll(newerMinor, at: url) != nil, "the minor version is authenticated too")
    }

    @Test func absurdKDFParametersAreRefusedBeforeRunning() throws {
        let (url, bytes) = try smallVault()
        for (offset, value) in [(32, UInt64(1_000_000)), (40, UInt64(1) << 40), (40, 0), (32, 0)] {
            var hostile = bytes
            withUnsafeBytes(of: value.littleEndian) { hostile.replaceSubrange(offset..<offset + 8, with: $0) }
            let start = ContinuousClock.now
            let error = openAndReadAll(hostile, at: url)
            guard case .corrupted(let message) = error else {
                Issue.record("expected corrupted for KDF field \(offset) = \(value), got \(String(describing: error))")
                continue
            }
            #expect(message.contains("KDF"))
            #expect(ContinuousClock.now - start < .seconds(1), "refused without running the KDF")
        }
    }

    @Test func notAVaultAndEmptyFile() throws {
        let (url, _) = try smallVault()
        #expect(openAndReadAll(Array("{\"json\": true}".utf8), at: url) == .corrupted("not a CredentialVault file"))
        #expect(openAndReadAll([], at: url) == .corrupted("file too short to be a vault"))
    }

    @Test func aLockHeldByAnotherProcessGivesBusyNotAHang() throws {
        let store = try TestVault.create(dir, lockTimeout: .milliseconds(300))
        let holder = Process()
        holder.executableURL = BuiltProducts.helper
        holder.arguments = ["hold-lock", store.url.path, "5"]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        defer { holder.terminate() }
        _ = output.fileHandleForReading.availableData  // "locked"
        let start = ContinuousClock.now
        #expect(throws: CredentialVaultError.busy) {
            try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
        }
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(300) && waited < .seconds(2), "bounded wait, took \(waited)")
        #expect(try store.load(CredentialKey(service: "s", account: "a")) == nil, "nothing half-written")
        // A SIGKILLed holder leaves no stale lock.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .default)
    }
}
