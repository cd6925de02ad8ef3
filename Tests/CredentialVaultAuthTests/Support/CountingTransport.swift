import Foundation
import Synchronization

@testable import CredentialVaultAuth

/// Wraps the real transport: counts the requests per path and token grant, and can inject
/// faults (a scripted answer or error instead of the real exchange) for the next N matching
/// requests.
final class CountingTransport: HTTPTransport {
    struct Fault: Sendable {
        var grant: String?
        var pathSuffix: String?
        var remaining: Int
        var outcome: Result<HTTPResponse, AuthError>
        /// Also forward the request to the provider before answering with the fault (a lost response).
        var forward = false
    }

    private let inner: any HTTPTransport
    private let state = Mutex<(grants: [String: Int], paths: [String: Int], faults: [Fault])>(([:], [:], []))

    init(inner: any HTTPTransport = URLSessionTransport()) { self.inner = inner }

    /// How many token requests with this `grant_type` were sent.
    func tokenRequests(_ grant: String) -> Int { state.withLock { $0.grants[grant] ?? 0 } }

    /// How many requests went to a path ending with `suffix`.
    func requests(pathSuffix suffix: String) -> Int {
        state.withLock { $0.paths.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }

    func inject(_ fault: Fault) { state.withLock { $0.faults.append(fault) } }

    func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        let grant = request.body.flatMap { body -> String? in
            let text = String(decoding: body, as: UTF8.self)
            return text.split(separator: "&").first { $0.hasPrefix("grant_type=") }
                .map { String($0.dropFirst("grant_type=".count)).removingPercentEncoding ?? "" }
        }
        let path = request.url.path
        let fault: Fault? = state.withLock { state in
            if let grant { state.grants[grant, default: 0] += 1 }
            state.paths[path, default: 0] += 1
            guard let index = state.faults.firstIndex(where: { fault in
                fault.remaining > 0 && (fault.grant == nil || fault.grant == grant)
                    && (fault.pathSuffix == nil || path.hasSuffix(fault.pathSuffix!))
            }) else { return nil }
            state.faults[index].remaining -= 1
            return state.faults[index]
        }
        if let fault {
            if fault.forward { _ = try? await inner.send(request) }
            return try fault.outcome.get()
        }
        return try await inner.send(request)
    }
}
