import COpenSSL
import CredentialVault
import Foundation

extension JWSSigningKey {
    /// The private key as unencrypted PKCS#8 PEM (`PRIVATE KEY`), in guarded memory: what a
    /// DPoP session key is stored as, beside its session, so that a restarted process (or
    /// another one sharing the session) signs with the same key. `init(privateKey:)` reads it back.
    /// - Throws: `JOSEError.signingFailed` when OpenSSL cannot encode the key.
    func pkcs8PEM() throws(JOSEError) -> SecureBytes {
        defer { ERR_clear_error() }
        guard let bio = BIO_new(BIO_s_mem()) else { throw .signingFailed("OpenSSL could not allocate a buffer") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw .signingFailed("OpenSSL could not encode the private key")
        }
        var pointer: UnsafeMutablePointer<CChar>?
        // BIO_get_mem_data is a macro: BIO_ctrl with BIO_CTRL_INFO.
        let length = Int(BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer))
        guard length > 0, let pointer else { throw .signingFailed("OpenSSL produced an empty key") }
        let pem = SecureBytes(copying: UnsafeRawBufferPointer(start: pointer, count: length))
        // Clear OpenSSL's copy before the BIO is freed.
        memset(pointer, 0, length)
        return pem
    }
}
