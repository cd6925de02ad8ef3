import CredentialVault
import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The read-only backend over `$CREDENTIALS_DIRECTORY`, on a directory laid out as systemd lays
/// one out (mode 0700 while written, files 0400), through both protocols; its hostile entries.
@Suite(.ownThread) final class SystemdCredentialStoreTests {
    let dir = TempDirectory()
    var credentials: String { dir.url.appendingPathComponent("credentials").path }

    init() throws {
        #expect(mkdir(credentials, 0o700) == 0)
    }

    /// Writes a credential file as systemd does (mode 0400 unless told).
    func put(_ name: String, _ value: Data, mode: mode_t = 0o400) throws {
        let path = credentials + "/" + name
        try value.write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode) == 0)
    }

    func store(_ naming: SystemdCredentialNaming = SystemdCredentialNaming(), sizeLimit: Int = SystemdCredentialStore.defaultSizeLimit) throws
        -> SystemdCredentialStore
    {
        try SystemdCredentialStore(directory: credentials, naming: naming, sizeLimit: sizeLimit)
    }

    /// Through `api`: the sync protocol or the async one.
    func load(_ store: SystemdCredentialStore, _ key: CredentialKey, _ api: ConformanceAPI) async throws(CredentialVaultError) -> Data? {
        switch api {
        case .sync: try store.synchronous.load(key)
        case .async: try await store.load(key)
        }
    }

    @Test(arguments: ConformanceAPI.allCases)
    func valuesRoundTripExactlyByTheirSystemdNames(api: ConformanceAPI) async throws {
        let service = ApplicationIdentifier.credvault.defaultService
        let sizes = [0, 1, 31, 4096, 1 << 20]
        for size in sizes { try put("size-\(size)", Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })) }
        try put("binary", Data((0...255).map { UInt8($0) }))
        try put("Zoë 👩‍💻", Data("ключ".utf8))
        let store = try store()
        for size in sizes {
            let value = try await load(store, CredentialKey(service: service, account: "size-\(size)"), api)
            #expect(value == Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }), "size \(size)")
        }
        #expect(try await load(store, CredentialKey(service: service, account: "binary"), api) == Data((0...255).map { UInt8($0) }))
        #expect(try await load(store, CredentialKey(service: service, account: "Zoë 👩‍💻"), api) == Data("ключ".utf8))
        #expect(try await load(store, CredentialKey(service: service, account: "missing"), api) == nil)
        #expect(try await load(store, CredentialKey(service: "other.example", account: "binary"), api) == nil, "another service has none")
        #expect(try await load(store, CredentialKey(service: service, account: "a/b"), api) == nil, "not a credential name")
    }

    @Test func namedCredentialsAreTheirKeysOnly() async throws {
        try put("db", Data("pw".utf8))
        try put("token", Data("t".utf8))
        let db = CredentialKey(service: "db.example.com", account: "app")
        let store = try store(SystemdCredentialNaming(service: "svc", names: ["db": db]))
        #expect(try store.synchronous.load(db) == Data("pw".utf8))
        #expect(try await store.load(db) == Data("pw".utf8))
        #expect(try store.synchronous.load(CredentialKey(service: "svc", account: "db")) == nil, "a mapped name is its key only")
        #expect(try store.synchronous.load(key: "token") == "t", "the string conveniences read by systemd name")
        #expect(try store.synchronous.listKeys() == [db, CredentialKey(service: "svc", account: "token")])
        #expect(try await store.listKeys(service: "svc") == [CredentialKey(service: "svc", account: "token")])
        #expect(try store.synchronous.listKeys(KeyQuery(servicePrefix: "db.")) == [db])
    }

    @Test func aKeyIsOneFileEvenWhenNamesCollide() throws {
        for name in ["a", "b", "svc-x"] { try put(name, Data(name.utf8)) }
        let shared = CredentialKey(service: "shared", account: "k")
        // "a" and "b" both claim `shared`: "a" (first by bytes) is its file, "b" is not listed.
        let store = try store(SystemdCredentialNaming(service: "svc", names: ["b": shared, "a": shared]))
        #expect(try store.synchronous.load(shared) == Data("a".utf8), "the first name by bytes")
        #expect(try store.synchronous.listKeys() == [CredentialKey(service: "shared", account: "k"), CredentialKey(service: "svc", account: "svc-x")])
        let claiming = try self.store(SystemdCredentialNaming(service: "svc", names: ["a": CredentialKey(service: "svc", account: "svc-x")]))
        #expect(try claiming.synchronous.load(CredentialKey(service: "svc", account: "svc-x")) == Data("a".utf8))
        #expect(try claiming.synchronous.listKeys() == [CredentialKey(service: "svc", account: "b"), CredentialKey(service: "svc", account: "svc-x")])
    }

    /// A mapping whose name is a path (`..`, `../x`, `a/b`) reads nothing outside the directory
    /// (a file there, root's at 0640 or the user's at 0600, would pass the file checks), and its
    /// key is no credential; listing is unchanged.
    @Test(arguments: ConformanceAPI.allCases)
    func mappedNamesThatAreNotFileNamesLeadNowhere(api: ConformanceAPI) async throws {
        try put("inside", Data("in".utf8))
        let outside = dir.url.appendingPathComponent("outside")
        try Data("secret outside".utf8).write(to: outside)
        #expect(chmod(outside.path, 0o600) == 0)
        #expect(mkdir(credentials + "/sub", 0o700) == 0)
        try put("sub/nested", Data("nested".utf8))
        let escapes = ["../outside", "..", ".", "sub/nested", "/etc/hostname", "./inside"]
        let names = Dictionary(uniqueKeysWithValues: escapes.map { ($0, CredentialKey(service: "mapped", account: $0)) })
        let store = try store(SystemdCredentialNaming(service: "svc", names: names))
        for name in escapes {
            let key = CredentialKey(service: "mapped", account: name)
            #expect(try await load(store, key, api) == nil, "\(name)")
            #expect(try store.synchronous.metadata(for: key) == nil, "\(name)")
        }
        #expect(try store.synchronous.listKeys() == [CredentialKey(service: "svc", account: "inside")])
    }

    @Test(arguments: ConformanceAPI.allCases)
    func namesAreFileNamesWithAnyCharacterButNULAndSlash(api: ConformanceAPI) async throws {
        let store = try store()
        let service = store.defaultService
        for (index, name) in ["a\tb", "line\nforged", "\u{1B}[2J", "x\u{7F}\u{85}\u{9B}", " x "].enumerated() {
            try put(name, Data("v\(index)".utf8))
            #expect(try await load(store, CredentialKey(service: service, account: name), api) == Data("v\(index)".utf8), "\(name.debugDescription)")
            #expect(try store.synchronous.listKeys().contains { Array($0.account.utf8) == Array(name.utf8) }, "listed with its exact bytes")
        }
        #expect(try await load(store, CredentialKey(service: service, account: "x"), api) == nil, "\" x \" is not \"x\"")
        #expect(try await load(store, CredentialKey(service: service, account: ""), api) == nil, "an empty account is not a file name")
        for key in [CredentialKey(service: "ctl\u{0}x", account: "a"), CredentialKey(service: service, account: "a\u{0}")] {
            switch api {
            case .sync:
                expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.load(key) }
                expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.metadata(for: key) }
                expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.delete(key) }
            case .async:
                await expectThrows(\CredentialVaultError.isInvalidArgument) { try await store.load(key) }
                await expectThrows(\CredentialVaultError.isInvalidArgument) { try await store.metadata(for: key) }
                await expectThrows(\CredentialVaultError.isInvalidArgument) { try await store.take(key) }
            }
        }
    }

    @Test func onlyRegularFilesAreListedAndHostileEntriesAreRefusedWithoutBlocking() async throws {
        try put("good", Data("v".utf8))
        try put("target", Data("secret behind a link".utf8))
        #expect(symlink(credentials + "/target", credentials + "/link") == 0)
        #expect(mkfifo(credentials + "/fifo", 0o600) == 0)
        #expect(mkdir(credentials + "/directory", 0o700) == 0)
        let store = try store()
        let service = store.defaultService
        #expect(try store.synchronous.listKeys().map(\.account) == ["good", "target"])
        expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.load(CredentialKey(service: service, account: "link")) }
        // A FIFO with no writer would block an ordinary open forever.
        let fifo = withinDeadline(.seconds(5), "loading a FIFO") { () -> CredentialVaultError? in
            do throws(CredentialVaultError) {
                _ = try store.synchronous.load(CredentialKey(service: service, account: "fifo"))
                return nil
            } catch { return error }
        }
        guard case .invalidArgument(let why)?? = fifo else { Issue.record("a FIFO gave \(String(describing: fifo))"); return }
        #expect(why.contains("FIFO"))
        await expectThrows(\CredentialVaultError.isInvalidArgument) { try await store.load(CredentialKey(service: service, account: "directory")) }
        await expectThrows(\CredentialVaultError.isInvalidArgument) { try await store.metadata(for: CredentialKey(service: service, account: "link")) }
    }

    @Test func aFileLargerThanTheLimitIsRefusedUnread() throws {
        try put("big", Data(count: 4097))
        try put("fits", Data(count: 4096))
        let store = try store(sizeLimit: 4096)
        #expect(try store.synchronous.load(CredentialKey(service: store.defaultService, account: "fits"))?.count == 4096)
        expectThrows(\CredentialVaultError.isInvalidArgument) {
            try store.synchronous.load(CredentialKey(service: store.defaultService, account: "big"))
        }
        #expect(throws: CredentialVaultError.invalidArgument("the size limit must be between 0 and 1 GiB")) {
            try SystemdCredentialStore(directory: self.credentials, sizeLimit: -1)
        }
    }

    @Test func looseModesAndForeignOwnersAreRefused() throws {
        try put("group-writable", Data("v".utf8), mode: 0o620)
        try put("world-readable", Data("v".utf8), mode: 0o404)
        try put("group-readable", Data("acl mask".utf8), mode: 0o440)
        try put("foreign", Data("v".utf8))
        let store = try store()
        let service = store.defaultService
        for name in ["group-writable", "world-readable"] {
            // The type's documented refusal of a loose mode: permissionDenied.
            expectThrows(\CredentialVaultError.isPermissionDenied, "\(name)") {
                try store.synchronous.load(CredentialKey(service: service, account: name))
            }
        }
        // systemd grants a service user a root-owned credential by an ACL, whose mask shows as group bits.
        #expect(try store.synchronous.load(CredentialKey(service: service, account: "group-readable")) == Data("acl mask".utf8))
        if geteuid() == 0 {
            #expect(chown(credentials + "/foreign", 12345, 12345) == 0)
            expectThrows(\CredentialVaultError.isPermissionDenied) {
                try store.synchronous.load(CredentialKey(service: service, account: "foreign"))
            }
        }
    }

    @Test func theDirectoryItselfIsChecked() throws {
        #expect(chmod(credentials, 0o705) == 0)
        expectThrows(\CredentialVaultError.isPermissionDenied) { try self.store() }
        #expect(chmod(credentials, 0o500) == 0)
        #expect(try store().synchronous.listKeys().isEmpty)
        #expect(chmod(credentials, 0o700) == 0)
        expectThrows(\CredentialVaultError.isNotAvailable) { try SystemdCredentialStore(directory: self.credentials + "/none") }
        expectThrows(\CredentialVaultError.isInvalidArgument) { try SystemdCredentialStore(directory: "relative/path") }
        #expect(try SystemdCredentialStore.fromEnvironment([:]) == nil, "no variable, no store")
        #expect(try SystemdCredentialStore.fromEnvironment(["CREDENTIALS_DIRECTORY": credentials])?.path == credentials)
    }

    @Test(arguments: ConformanceAPI.allCases)
    func everyWriteIsUnsupportedAfterItsArgumentsAreChecked(api: ConformanceAPI) async throws {
        try put("kept", Data("v".utf8))
        let store = try store()
        let key = CredentialKey(service: store.defaultService, account: "kept")
        func unsupported(_ body: () async throws -> Void) async -> Bool {
            do { try await body() } catch { if case .unsupported? = error as? CredentialVaultError { return true } }
            return false
        }
        switch api {
        case .sync:
            let sync = store.synchronous
            #expect(await unsupported { try sync.save(Data("x".utf8), for: key, options: .default) })
            #expect(await unsupported { _ = try sync.take(key) })
            #expect(await unsupported { _ = try sync.delete(key) })
            #expect(await unsupported { _ = try sync.deleteAll(service: nil) })
            #expect(throws: CredentialVaultError.invalidArgument("the service must not be empty")) {
                try sync.save(Data(), for: CredentialKey(service: "", account: "a"), options: .default)
            }
        case .async:
            #expect(await unsupported { try await store.save(Data("x".utf8), for: key, options: .default) })
            #expect(await unsupported { _ = try await store.take(key) })
            #expect(await unsupported { _ = try await store.delete(key) })
            #expect(await unsupported { _ = try await store.deleteAll(service: nil) })
        }
        #expect(try store.synchronous.load(key) == Data("v".utf8), "nothing was changed")
    }

    @Test func metadataComesFromFstatWithoutReading() async throws {
        let before = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 1)
        try put("token", Data("v".utf8))
        let after = Date()
        let store = try store()
        let key = CredentialKey(service: store.defaultService, account: "token")
        let metadata = try #require(try await store.metadata(for: key))
        #expect(metadata.key == key && metadata.accessibility == .deviceOnly && !metadata.isEphemeral && metadata.created == nil)
        let modified = try #require(metadata.modified)
        #expect(modified >= before && modified <= after, "the file's modification time")
        #expect(try store.synchronous.metadata(for: CredentialKey(service: store.defaultService, account: "none")) == nil)
    }

    @Test func theStringConveniencesRefuseBinaryAndLoseNothing() throws {
        try put("binary", Data([0xFF, 0xFE]))
        let store = try store()
        expectThrows(\CredentialVaultError.isInvalidArgument) { try store.synchronous.load(key: "binary") }
        #expect(try store.synchronous.load(CredentialKey(service: store.defaultService, account: "binary")) == Data([0xFF, 0xFE]))
    }

    @Test func asyncReadsLeaveTheCooperativePoolBeating() async throws {
        for i in 0..<32 { try put("task-\(i)", Data("value-\(i)".utf8)) }
        let store = try store()
        let (loaded, gap) = try await Heartbeat.longestGap {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<32 {
                    group.addTask { try await store.load(CredentialKey(service: store.defaultService, account: "task-\(i)")) == Data("value-\(i)".utf8) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(loaded == 32)
        // As the conformance suite's check: reads that blocked their threads would stop the
        // heartbeat for seconds.
        #expect(gap < Heartbeat.blockedPoolBound, "the heartbeat stopped for \(gap)")
    }

    /// The conformance suite's checks that apply to a read-only store (the others begin by
    /// saving): invalid arguments are refused with a typed error through both protocols.
    @Test(arguments: [ConformanceCheck.invalidArguments], ConformanceAPI.allCases)
    func applicableConformanceChecks(check: ConformanceCheck, api: ConformanceAPI) async throws {
        let path = credentials
        let backend = ConformanceBackend(
            name: "systemd-credentials", makeStore: { _ in StoreUnderTest(try SystemdCredentialStore(directory: path)) }, reopen: nil)
        try await ConformanceSuite.run(check, on: backend, through: api)
    }
}
