import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The session record's per-resource tokens (RFC 8707): bounded, compatible with records
/// written before they existed, and checked inputs.
@Suite("resource tokens in the session record")
struct ResourceTokenRecordTests {
    static let key = CredentialKey(service: "test.auth", account: "session")

    /// A manager over `record` stored raw, with a refresher that must never be asked.
    static func manager(storing record: String) async throws -> SessionManager {
        let store = InMemoryStore()
        try await store.save(Data(record.utf8), for: key, options: .default)
        return await SessionManager(refresher: HookRefresher { Issue.record("no refresh expected") }, store: store, key: key)
    }

    static func record(resources: [String: String]) -> String {
        let tokens = resources.map { "\"\($0.key)\":{\"accessToken\":\"\($0.value)\",\"obtainedAt\":0}" }.joined(separator: ",")
        return #"{"accessToken":"main","obtainedAt":0,"refreshToken":"r","resourceTokenSet":{"# + tokens + "}}"
    }

    @Test("a record of the format before resource indicators loads, with no resource tokens")
    func previousFormatLoads() async throws {
        // Written by the previous release (sorted keys, reference-date seconds).
        let previous = #"{"accessToken":"at","expiresAt":786400000,"idToken":"it","obtainedAt":786396400,"refreshToken":"rt","scope":"openid","user":{"attributes":{},"email":"alice@example.com","name":"Alice","subject":"alice"}}"#
        let manager = try await Self.manager(storing: previous)
        let session = try #require(try await manager.storedSession())
        #expect(session.accessToken == "at" && session.refreshToken == "rt")
        #expect(session.resourceTokens.isEmpty)
    }

    @Test("a stored record with more resources than a session holds is refused as corrupted, without a crash")
    func tooManyResources() async throws {
        let resources = Dictionary(uniqueKeysWithValues: (0...ResourceTokenSet.maximumCount).map { ("https://r\($0).example/", "t\($0)") })
        let manager = try await Self.manager(storing: Self.record(resources: resources))
        await #expect(throws: AuthError.self) { _ = try await manager.storedSession() }
        do { _ = try await manager.storedSession() } catch {
            guard case .storage(.corrupted) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test("a stored record with a huge resource URI is refused as corrupted")
    func hugeResourceURI() async throws {
        let huge = "https://example.com/" + String(repeating: "a", count: ResourceURI.maximumIndicatorLength)
        let manager = try await Self.manager(storing: Self.record(resources: [huge: "t"]))
        do {
            _ = try await manager.storedSession()
            Issue.record("a huge resource URI was accepted")
        } catch {
            guard case .storage(.corrupted) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test(
        "a stored record keying a token by something that is not a resource indicator is refused as corrupted",
        arguments: [
            #"\u001b]0;owned\u0007https://api.example.com/"#,  // terminal escapes, printed by `auth status`
            "not a uri",
            "HTTPS://API.example.com:443/",  // never asked for in this form: the indicator is lower case, without the default port
        ])
    func resourceKeyThatIsNotAnIndicator(key: String) async throws {
        let manager = try await Self.manager(storing: Self.record(resources: [key: "t"]))
        do {
            let session = try await manager.storedSession()
            Issue.record("accepted as \(session?.resourceTokens.keys.map { $0.debugDescription } ?? [])")
        } catch {
            guard case .storage(.corrupted) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test(
        "a stored record whose refresh chain names a narrowing to something that is not a resource indicator is refused as corrupted",
        arguments: [#"\u001b]0;owned\u0007https://api.example.com/"#, "not a uri", "HTTPS://API.example.com:443/"])
    func narrowedChainThatIsNotAnIndicator(value: String) async throws {
        let record = #"{"accessToken":"main","obtainedAt":0,"refreshToken":"r","refreshChain":{"rotates":true,"narrowedTo":"# + "\"\(value)\"}}"
        let manager = try await Self.manager(storing: record)
        do {
            let session = try await manager.storedSession()
            Issue.record("accepted as \(String(describing: session?.refreshChain))")
        } catch {
            guard case .storage(.corrupted) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test("a record's refresh chain round-trips")
    func refreshChainLoads() async throws {
        let record = #"{"accessToken":"main","obtainedAt":0,"refreshToken":"r","refreshChain":{"rotates":true,"narrowedTo":"https://api.example.com/"}}"#
        let manager = try await Self.manager(storing: record)
        let session = try #require(try await manager.storedSession())
        #expect(session.refreshChain == RefreshChain(rotates: true, narrowedTo: "https://api.example.com/"))
    }

    @Test("a record within the bounds round-trips its resource tokens")
    func withinBoundsLoads() async throws {
        let manager = try await Self.manager(storing: Self.record(resources: ["https://api.example.com/": "ta"]))
        let session = try #require(try await manager.storedSession())
        #expect(session.resourceTokens["https://api.example.com/"]?.accessToken == "ta")
        #expect(!session.description.contains("ta\""), "no token in the description")
    }

    @Test("the set keeps at most its maximum, dropping the token obtained longest ago")
    func setIsBounded() {
        var set = ResourceTokenSet()
        for index in 0...ResourceTokenSet.maximumCount {
            set.store(ResourceToken(accessToken: "t\(index)", obtainedAt: Date(timeIntervalSince1970: Double(index))), for: "https://r\(index)/")
        }
        #expect(set.tokens.count == ResourceTokenSet.maximumCount)
        #expect(set["https://r0/"] == nil)
        #expect(set["https://r\(ResourceTokenSet.maximumCount)/"] != nil)
    }

    @Test("resources are checked: a fragment, a relative URI, an over-long minTTL and too many configured are refused")
    func inputsChecked() async throws {
        #expect(throws: AuthError.self) { _ = try ResourceURI.indicator(URL(string: "https://api.example.com/#frag")!) }
        #expect(throws: AuthError.self) { _ = try ResourceURI.indicator(URL(string: "/relative")!) }
        #expect(try ResourceURI.indicator(URL(string: "HTTPS://API.example.com:443/x")!) == "https://api.example.com/x")
        let manager = try await Self.manager(storing: Self.record(resources: [:]))
        await #expect(throws: AuthError.self) {
            _ = try await manager.accessToken(for: URL(string: "https://api.example.com/")!, minTTL: .seconds(Int64.max))
        }
        var configuration = OIDCConfiguration(issuer: URL(string: "https://issuer.example")!, clientID: "c")
        configuration.resources = (0...ResourceTokenSet.maximumCount).map { URL(string: "https://r\($0).example/")! }
        #expect(throws: AuthError.self) { try configuration.validate() }
        configuration.resources = [URL(string: "https://api.example.com/#f")!]
        #expect(throws: AuthError.self) { try configuration.validate() }
    }
}
