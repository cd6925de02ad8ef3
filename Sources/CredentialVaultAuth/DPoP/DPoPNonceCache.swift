import CredentialVault
import Foundation

/// The last DPoP nonce each origin gave (RFC 9449 section 8): in memory, and persisted in the
/// session's store so that another process sharing the session starts with the latest one
/// instead of a `use_dpop_nonce` round trip (glewlwyd keeps one nonce per client for the whole
/// server and replaces it after a number of proofs, whoever sent them).
///
/// Memory is read first; the store only when this process has no nonce for the origin. A stale
/// nonce costs one retry (the answer carries the new one), never a failure. Store failures are
/// ignored here for the same reason: a nonce is an optimisation, not a credential.
actor DPoPNonceCache {
    private let store: (any AsyncTokenStorageAdapter)?
    private let key: CredentialKey
    private let options: StorageOptions
    private var nonces: [String: String] = [:]
    /// Origins already looked up in the store, so that a provider without nonces costs one store read, not one per proof.
    private var looked: Set<String> = []

    /// The most origins whose nonce is kept, here and in the store. Every resource the session
    /// calls may send one, and the stored record is rewritten whole at each new nonce: without
    /// a bound, a client following links to ever new hosts grew it (and each write) forever.
    /// Past the bound an arbitrary origin is forgotten, which costs that origin one retry.
    static let maximumOrigins = 32

    init(store: (any AsyncTokenStorageAdapter)?, key: CredentialKey, options: StorageOptions) {
        self.store = store
        self.key = key
        self.options = options
    }

    /// The nonce to put in a proof for `url`, if one is known.
    func nonce(for url: URL) async -> String? {
        let origin = DPoPProof.origin(of: url)
        if let nonce = nonces[origin] { return nonce }
        if looked.count >= 8 * Self.maximumOrigins { looked = [] }
        guard looked.insert(origin).inserted else { return nil }
        guard let stored = await loadStored()[origin] else { return nil }
        nonces[origin] = stored
        return stored
    }

    /// Remembers the `DPoP-Nonce` a response to `url` carried (success or error alike:
    /// glewlwyd sends a replaced nonce only with the successful answer that used up the old one).
    func learn(from response: HTTPResponse, for url: URL) async {
        guard let nonce = response.headers["dpop-nonce"], Self.isValid(nonce) else { return }
        let origin = DPoPProof.origin(of: url)
        guard nonces[origin] != nonce else { return }
        Self.makeRoom(for: origin, in: &nonces)
        nonces[origin] = nonce
        guard let store else { return }
        var stored = await loadStored()
        Self.makeRoom(for: origin, in: &stored)
        stored[origin] = nonce
        guard let data = try? JSONEncoder.session.encode(stored) else { return }
        _ = try? await store.save(data, for: key, options: options)
    }

    /// Forgets every nonce, here and in the store (sign-out).
    func clear() async {
        nonces = [:]
        looked = []
        _ = try? await store?.delete(key)
    }

    /// The stored nonces another process (or an older version) wrote, checked like the ones
    /// a server sends: invalid or oversized ones are dropped, and at most `maximumOrigins` kept.
    private func loadStored() async -> [String: String] {
        guard let store, let data = try? await store.load(key) else { return [:] }
        let stored = (try? OutsideJSON.decode([String: String].self, from: data)) ?? [:]
        return Dictionary(uniqueKeysWithValues: stored.filter { Self.isValid($0.value) }.prefix(Self.maximumOrigins).map { ($0.key, $0.value) })
    }

    /// Forgets an arbitrary other origin when `nonces` is full and `origin` is new.
    private static func makeRoom(for origin: String, in nonces: inout [String: String]) {
        while nonces[origin] == nil, nonces.count >= maximumOrigins, let some = nonces.keys.first { nonces[some] = nil }
    }

    /// RFC 9449's `NQCHAR` (printable ASCII without `"` and `\`), and a sane length.
    static func isValid(_ nonce: String) -> Bool {
        !nonce.isEmpty && nonce.utf8.count <= 512
            && nonce.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != 0x22 && $0 != 0x5C }
    }
}
