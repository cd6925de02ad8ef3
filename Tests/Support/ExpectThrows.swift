import Testing

/// Expects `body` to throw an `E` of the case `isCase` accepts, and returns it: for the cases
/// with a payload (`.corrupted(why)`), which `#expect(throws: E.someCase)` cannot name. A test
/// that only checked the type would pass on any refusal, including the wrong one. The case is
/// usually named by a key path to a predicate: `expectThrows(\CredentialVaultError.isCorrupted)`.
@discardableResult
package func expectThrows<E: Error, R>(
    _ isCase: (E) -> Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    performing body: () throws -> R
) -> E? {
    let error = #expect(throws: E.self, comment, sourceLocation: sourceLocation, performing: body)
    return checked(error, isCase, comment, sourceLocation)
}

/// `expectThrows` for an async body, run in the caller's isolation.
@discardableResult
package func expectThrows<E: Error, R>(
    _ isCase: (E) -> Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    isolation: isolated (any Actor)? = #isolation, performing body: () async throws -> R
) async -> E? {
    // The result is dropped here: only the error is checked, and a `sending` result would
    // have to be Sendable.
    let error = await #expect(throws: E.self, comment, sourceLocation: sourceLocation) { _ = try await body() }
    return checked(error, isCase, comment, sourceLocation)
}

private func checked<E: Error>(_ error: E?, _ isCase: (E) -> Bool, _ comment: Comment?, _ sourceLocation: SourceLocation) -> E? {
    guard let error else { return nil }
    #expect(isCase(error), "another case was thrown: \(error)\(comment.map { " (\($0))" } ?? "")", sourceLocation: sourceLocation)
    return error
}
