import CredentialVault

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body with typed throws (the standard library's `rethrows` would
    /// widen the error to `any Error`).
    func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) throws(CredentialVaultError) -> R) throws(CredentialVaultError) -> R {
        try withUnsafeBytes { bytes in Result { () throws(CredentialVaultError) in try body(bytes) } }.get()
    }
}
