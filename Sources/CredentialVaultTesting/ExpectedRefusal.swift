import CredentialVault
import Testing

/// The refusal a conformance check owes: the case of `CredentialVaultError` a backend must
/// throw, not only some error (a check of the type alone passes on the wrong refusal, a `.io`
/// or `.corrupted` that hides a bug).
enum ExpectedRefusal: String {
    case unsupported
    case invalidArgument

    /// Whether `error` is this refusal.
    func matches(_ error: CredentialVaultError) -> Bool {
        switch (self, error) {
        case (.unsupported, .unsupported), (.invalidArgument, .invalidArgument): true
        default: false
        }
    }

    /// Expects `body` to throw this refusal; records an issue for another error or none.
    func expect(
        _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation, isolation: isolated (any Actor)? = #isolation,
        performing body: () async throws -> Void
    ) async {
        let error = await #expect(throws: CredentialVaultError.self, comment, sourceLocation: sourceLocation) { try await body() }
        guard let error else { return }
        #expect(matches(error), "\(rawValue) expected, \(error) thrown\(comment.map { " (\($0))" } ?? "")", sourceLocation: sourceLocation)
    }
}
