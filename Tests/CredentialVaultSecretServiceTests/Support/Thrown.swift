import CredentialVault

/// The error `body` throws; `nil` when it returns. (A `catch .someCase(let value)` pattern on a
/// typed throw crashes this compiler's ownership checker in some test functions.)
func thrown<T>(_ body: () throws(CredentialVaultError) -> T) -> CredentialVaultError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
