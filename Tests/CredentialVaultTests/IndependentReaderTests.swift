import Foundation
import CredentialVaultTestSupport
import Testing

/// docs/FORMAT.md is enough to read a vault: `scripts/format-reader.py`, a reader written from
/// that document alone (Python and libsodium, no code of the library's), reads every golden
/// fixture that needs no service exactly as the library does. When the format or the document
/// changes and they no longer agree, this fails.
@Suite(.ownThread) final class IndependentReaderTests {
    let dir = TempDirectory()

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/format-reader.py")

    /// What the reader prints (the fields this test checks).
    struct Reading: Decodable {
        var format: String
        var rolled_forward: Bool
        var counter: UInt64
        var counter_file: UInt64?
        var records: [Record]
    }

    struct Record: Decodable, Equatable {
        var service: String
        var account: String
        var label: String?
        var device_only: Bool
        var value: String?
        var created_ms: UInt64?
        var modified_ms: UInt64
    }

    /// The credentials of every fixture, and of the torn commit's rolled-forward save, in the
    /// reader's order (by service and account bytes), values in hex.
    private func expected(rolledForward: Bool) -> [Record] {
        func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
        let start = UInt64(GoldenFixtures.writingStart.timeIntervalSince1970) * 1000
        var all = GoldenFixtures.expected.enumerated().map { n, fixture in
            let (key, value, options) = fixture
            return Record(
                service: key.service, account: key.account, label: key.label, device_only: options.accessibility == .deviceOnly,
                value: hex(value), created_ms: start + 1000 * UInt64(GoldenFixtures.expectedTimes[n].created),
                modified_ms: start + 1000 * UInt64(GoldenFixtures.expectedTimes[n].modified))
        }
        if rolledForward {
            let (key, value) = GoldenFixtures.interrupted
            all.append(
                Record(
                    service: key.service, account: key.account, label: nil, device_only: false, value: hex(value), created_ms: start + 6000,
                    modified_ms: start + 6000))
        }
        // By the names' bytes, service first: a NUL cannot occur in a name, so it can join them.
        return all.sorted { Array(($0.service + "\0" + $0.account).utf8).lexicographicallyPrecedes(Array(($1.service + "\0" + $1.account).utf8)) }
    }

    @Test(arguments: [
        "passphrase.cvault", "keyfile.cvault", "device.cvault", "counter.cvault", "residue.cvault", "interrupted-append.cvault",
        "torn-commit.cvault", "keyring.cvault",
    ])
    func aReaderWrittenFromTheFormatDocumentReadsTheGoldenFixture(name: String) async throws {
        let (folder, _) = try GoldenFixtures.privateCopy(in: dir)
        // As `credvault --passphrase-file` reads it: a trailing line break is not part of it.
        let passphrase = dir.path("passphrase")
        try Data((GoldenFixtures.passphrase + "\r\n").utf8).write(to: passphrase)
        var arguments = [
            Self.script.path, folder.appendingPathComponent(name).path, "--passphrase-file", passphrase.path,
            "--key-file", folder.appendingPathComponent("keyfile").path, "--host-secret", folder.appendingPathComponent("host-secret").path,
            "--machine-id", GoldenFixtures.machineID, "--counters", folder.appendingPathComponent("counters").path,
        ]
        // The keyring's device secret, as the keyring item holds it.
        if name == "keyring.cvault" { arguments += ["--held", folder.appendingPathComponent("keyring-device-secret").path] }
        let reader = try CLIProcess(arguments, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        let status = try await reader.wait()
        #expect(status == 0, "\(reader.stdout)\(reader.stderr)")
        let read = try JSONDecoder().decode(Reading.self, from: Data(reader.stdout.utf8))
        #expect(read.format == "1.0")
        let rolledForward = name == "torn-commit.cvault"
        #expect(read.rolled_forward == rolledForward)
        if name == "counter.cvault" {
            #expect(read.counter_file == read.counter, "the counter file holds the newest commit's value")
        }
        #expect(read.records == expected(rolledForward: rolledForward))
    }
}
